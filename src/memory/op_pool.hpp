// Recycles operation objects: after warm-up, starting an operation allocates nothing. The pool can be
// declared where Op is incomplete; take() (instantiated where Op is complete) records how to delete.
#pragma once

#include <atomic>
#include <cstdlib>
#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

namespace deadbolt::detail {

template <typename Op>
class op_pool {
 public:
  op_pool() = default;
  op_pool(const op_pool&) = delete;
  op_pool& operator=(const op_pool&) = delete;
  ~op_pool() {
    for (Op* op : all_) destroy_(op);
  }

  template <typename... Args>
  Op* take(Args&&... args) {
    if (!idle_.empty()) {
      Op* op = idle_.back();
      idle_.pop_back();
      return op;
    }
    destroy_ = [](Op* op) { delete op; };
    all_.push_back(new Op(std::forward<Args>(args)...));
    if (idle_.capacity() < all_.size()) idle_.reserve(all_.capacity());  // give_back never allocates
    return all_.back();
  }
  void give_back(Op* op) { idle_.push_back(op); }
  std::size_t created() const { return all_.size(); }

 private:
  std::vector<Op*> all_;
  std::vector<Op*> idle_;
  void (*destroy_)(Op*) = nullptr;
};

/// One pool per operation kind, made on first use: an operation kind registers itself by asking for
/// its pool (`pools.of<unlock_op>()`), so the engine need not know every kind there is.
class op_pools {
 public:
  static constexpr std::size_t max_kinds = 16;

  template <typename Op>
  op_pool<Op>& of() {
    static const std::size_t index = next_index();
    std::unique_ptr<slot>& s = slots_[index];
    if (!s) s.reset(new typed_slot<Op>);
    return static_cast<typed_slot<Op>&>(*s).pool;  // no RTTI: the index names the type
  }

 private:
  struct slot {
    virtual ~slot() = default;
  };
  template <typename Op>
  struct typed_slot final : slot {
    op_pool<Op> pool;
  };
  static std::size_t next_index() {
    static std::atomic<std::size_t> kinds{0};
    const std::size_t i = kinds.fetch_add(1);
    if (i >= max_kinds) std::abort();  // a new operation kind: raise max_kinds
    return i;
  }
  std::unique_ptr<slot> slots_[max_kinds];
};

}  // namespace deadbolt::detail

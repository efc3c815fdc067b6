// Recycles operation objects: after warm-up, starting an operation allocates nothing. The pool can be
// declared where Op is incomplete; take() (instantiated where Op is complete) records how to delete.
#pragma once

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

}  // namespace deadbolt::detail

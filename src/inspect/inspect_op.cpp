// inspect(name): runs lua/inspect.lua over every key of the name (docs/protocol.md §0) and reports
// what object_reading makes of the reply. Read-only, so a lost reply is simply an error: nothing to
// reconcile.
#include <string>

#include "base/keys.hpp"
#include "base/reply_builder.hpp"
#include "deadbolt/error.hpp"
#include "deadbolt/port/asio_core.hpp"
#include "engine/op_context.hpp"
#include "inspect/object_reading.hpp"
#include "pipeline/request.hpp"
#include "pipeline/script_call.hpp"
#include "scripts.hpp"

namespace deadbolt::detail {
namespace {

class inspect_op final : public request {
 public:
  inspect_op(std::string_view name, basic_completion<object_info>& done)
      : name_(name),
        queue_(prefix_name("redisson_lock_queue", name)),
        deadlines_(prefix_name("redisson_lock_timeout", name)),
        token_(prefix_name("redisson_lock_token", name)),
        permits_(suffix_name(name, "timeout")),
        most_(static_cast<std::int64_t>(inspect_most_entries)),
        done_(done) {
    route_key = name_;
  }

  void encode(resp::encoder& e) override {
    begin_script(e, *this, scripts::inspect, 5, 1);
    e.bulk(name_).bulk(queue_).bulk(deadlines_).bulk(token_).bulk(permits_).bulk(most_.view());
  }
  void on_node(const resp::node& n) override { reply_.add(n); }
  void on_done(std::error_code ec) override {
    object_info info;
    if (!ec) ec = read_object(reply_.result(), info);
    basic_completion<object_info>& done = done_;
    delete this;
    done.complete(ec, std::move(info));
  }

 private:
  std::string name_;
  std::string queue_;
  std::string deadlines_;
  std::string token_;
  std::string permits_;
  decimal most_;
  basic_completion<object_info>& done_;
  reply_builder reply_;
};

}  // namespace

op_ref start_inspect(client_core& core, std::string_view name, basic_completion<object_info>& done) {
  op_context& ctx = context_of(core);
  if (const std::error_code refused = ctx.refusal()) {  // the configuration's error, or shutting_down
    asio::post(ctx.io_executor(), [life = ctx.lifeline(), &done, refused] { done.complete(refused, object_info{}); });
    return {};
  }
  ctx.submit(*new inspect_op(name, done));
  return {};
}

}  // namespace deadbolt::detail

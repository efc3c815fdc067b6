// Arbitrary commands with their whole reply as a tree (deadbolt::client::async_command).
#include <charconv>

#include "base/reply_builder.hpp"
#include "base/server_error.hpp"
#include "deadbolt/error.hpp"
#include "deadbolt/port/asio_core.hpp"
#include "engine/op_context.hpp"
#include "pipeline/request.hpp"

namespace deadbolt {

std::optional<std::int64_t> reply::as_int() const {
  if (type != resp::type::integer && type != resp::type::blob_string && type != resp::type::simple_string) {
    return std::nullopt;
  }
  std::int64_t v = 0;
  auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (r.ec != std::errc() || r.ptr != text.data() + text.size()) return std::nullopt;
  return v;
}

namespace detail {
namespace {

class command_op final : public request {
 public:
  command_op(std::vector<std::string> args, basic_completion<reply>& done) : args_(std::move(args)), done_(done) {}

  void encode(resp::encoder& e) override {
    e.array(args_.size());
    for (const auto& a : args_) e.bulk(a);
  }
  void on_node(const resp::node& n) override { result_.add(n); }
  void on_done(std::error_code ec) override {
    if (!ec && result_.result().is_error()) ec = server_error_code(result_.result().text);
    basic_completion<reply>& done = done_;
    reply r = result_.take();
    delete this;
    done.complete(ec, std::move(r));
  }

 private:
  std::vector<std::string> args_;
  basic_completion<reply>& done_;
  reply_builder result_;
};

}  // namespace

op_ref start_command(client_core& core, std::vector<std::string> args, basic_completion<reply>& done) {
  op_context& ctx = context_of(core);
  const std::error_code refused = ctx.refusal();  // the configuration's error, or shutting_down
  if (refused || args.empty()) {
    const std::error_code ec = refused ? refused : make_error_code(errc::invalid_config);
    asio::post(ctx.io_executor(), [life = ctx.lifeline(), &done, ec] { done.complete(ec, reply{}); });
    return {};
  }
  ctx.submit(*new command_op(std::move(args), done));
  return {};
}

}  // namespace detail
}  // namespace deadbolt

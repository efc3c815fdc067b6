// deadbolt status: what NAME is (the library's inspect(): its kind, holders, TTL, a fair lock's queue,
// the fencing token, a permit-expirable semaphore's permits) and, for each hold, the holder info
// that deadbolt run left beside it; printed for people or as JSON.
#include <string>
#include <vector>

#include "commands.hpp"
#include "connect.hpp"
#include "exit_codes.hpp"
#include "lock_state.hpp"

namespace deadbolt::cli {
namespace {

class status_query {
 public:
  explicit status_query(const options& o) : o_(o), client_(io_.get_executor(), make_config(o)), connector_(io_, client_, o) {}

  int run() {
    connector_.start(o_.connect_timeout, [this](int code) {
      if (code != 0) return finish(code);
      inspect();
    });
    io_.run();
    return code_;
  }

 private:
  void inspect() {
    client_.async_inspect(o_.name, [this](std::error_code ec, deadbolt::object_info info) {
      if (ec) return finish(report_error(o_, ec, "cannot read " + o_.name));
      state_.object = std::move(info);
      read_holder_info();
    });
  }

  // One GET per hold, sent at once; a missing or foreign info key (an error reply) leaves that hold
  // without; a connection failure ends the status.
  void read_holder_info() {
    for (const auto& h : state_.object.holders) holders_.push_back(h.owner);
    for (const auto& p : state_.object.permits) holders_.push_back(p.id.hex());
    pending_ = holders_.size();
    if (pending_ == 0) return print();
    for (const auto& holder : holders_) {
      client_.async_command({"GET", holder_info_key(o_.name, holder)}, [this, holder](std::error_code ec, deadbolt::reply r) {
        if (ec && ec != deadbolt::errc::wrong_type && ec != deadbolt::errc::server_error && !failed_) {
          failed_ = true;
          finish(report_error(o_, ec, "cannot read " + o_.name));
        }
        if (!ec && !r.is_null()) {
          if (auto info = decode_holder_info(r.text)) state_.infos[holder] = std::move(*info);
        }
        if (--pending_ == 0 && !failed_) print();
      });
    }
  }

  // Exits 0 when NAME is held (a lock with a holder, a permit-expirable semaphore with a permit out),
  // 1 when it is not (free, absent, or no lock), as a test of "is it held?" for scripts.
  void print() {
    if (o_.json) print_json(o_.name, state_); else print_text(o_.name, state_);
    const deadbolt::object_info& o = state_.object;
    finish(o.locked() || o.permit_count > 0 ? exit_ok : exit_not_held);
  }

  void finish(int code) {
    code_ = code;
    client_.shutdown();
  }

  const options& o_;
  asio::io_context io_;
  deadbolt::client client_;
  connector connector_;
  lock_state state_;
  std::vector<std::string> holders_;
  std::size_t pending_ = 0;
  bool failed_ = false;
  int code_ = exit_failure;
};

}  // namespace

int status_command(const options& o) { return status_query(o).run(); }

}  // namespace deadbolt::cli

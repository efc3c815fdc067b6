// deadbolt status: what NAME is (lock_reading.hpp: its kind, holders, TTL, a fair lock's queue, the
// fencing token, a permit-expirable semaphore's permits, and the holder info deadbolt run left beside
// each hold); printed for people or as JSON.
#include <string>
#include <vector>

#include "commands.hpp"
#include "connect.hpp"
#include "exit_codes.hpp"
#include "lock_reading.hpp"
#include "lock_state.hpp"

namespace deadbolt::cli {
namespace {

class status_query {
 public:
  explicit status_query(const options& o) : o_(o), session_(o) {}

  int run() {
    return session_.run([this] { inspect(); });
  }

 private:
  void inspect() {
    read_lock_state(session_.client, o_.name, [this](std::error_code ec, lock_state state) {
      if (ec) return finish(report_error(o_, ec, "cannot read " + o_.name));
      state_ = std::move(state);
      print();
    });
  }

  // Exits 0 when NAME is held (a lock with a holder, a permit-expirable semaphore with a permit out),
  // 1 when it is not (free, absent, or no lock), as a test of "is it held?" for scripts.
  void print() {
    if (o_.json) print_json(o_.name, state_); else print_text(o_.name, state_);
    const deadbolt::object_info& o = state_.object;
    finish(o.locked() || o.permit_count > 0 ? exit_ok : exit_not_held);
  }

  void finish(int code) { session_.finish(code); }

  const options& o_;
  one_shot session_;
  lock_state state_;
};

}  // namespace

int status_command(const options& o) { return status_query(o).run(); }

}  // namespace deadbolt::cli

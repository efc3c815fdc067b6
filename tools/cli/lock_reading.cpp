#include "lock_reading.hpp"

#include <memory>
#include <vector>

#include "holder_info.hpp"

namespace deadbolt::cli {
namespace {

struct reading {
  std::string name;
  lock_state state;
  std::size_t pending = 0;
  bool failed = false;
  std::function<void(std::error_code, lock_state)> done;
};

}  // namespace

void read_lock_state(deadbolt::client& client, const std::string& name,
                     std::function<void(std::error_code, lock_state)> done) {
  auto r = std::make_shared<reading>();
  r->name = name;
  r->done = std::move(done);
  client.async_inspect(name, [&client, r](std::error_code ec, deadbolt::object_info info) {
    if (ec) return r->done(ec, {});
    r->state.object = std::move(info);
    std::vector<std::string> holders;
    for (const auto& h : r->state.object.holders) holders.push_back(h.owner);
    for (const auto& p : r->state.object.permits) holders.push_back(p.id.hex());
    r->pending = holders.size();
    if (r->pending == 0) return r->done({}, std::move(r->state));
    for (const auto& holder : holders) {
      client.async_command({"GET", holder_info_key(r->name, holder)}, [r, holder](std::error_code gec, deadbolt::reply reply) {
        const bool foreign = gec == deadbolt::errc::wrong_type || gec == deadbolt::errc::server_error;
        if (gec && !foreign && !r->failed) {
          r->failed = true;
          r->done(gec, {});
        }
        if (!gec && !reply.is_null()) {
          if (auto decoded = decode_holder_info(reply.text)) r->state.infos[holder] = std::move(*decoded);
        }
        if (--r->pending == 0 && !r->failed) r->done({}, std::move(r->state));
      });
    }
  });
}

}  // namespace deadbolt::cli

#include "fenced_store.hpp"

#include <utility>
#include <vector>

namespace verify {

std::string fence_key_of(const std::string& key) {
  // A key with a hash tag keeps it first; any other key becomes the tag (deadbolt/fenced_write.hpp).
  const auto open = key.find('{');
  const bool tagged = open != std::string::npos && key.find('}', open + 1) != std::string::npos &&
                      key.find('}', open + 1) > open + 1;
  return tagged ? key + ":fence" : "{" + key + "}:fence";
}

void fenced_store::read(const std::string& key, std::uint64_t token, const std::string& writer, handler done) {
  run({"EVAL", script_, "2", key, fence_key_of(key), "get", std::to_string(fenced_ ? token : 0), writer}, std::move(done));
}

void fenced_store::write(const std::string& key, std::uint64_t token, const std::string& writer, std::int64_t value,
                         handler done) {
  run({"EVAL", script_, "2", key, fence_key_of(key), "set", std::to_string(fenced_ ? token : 0), std::to_string(value),
       writer},
      [value, done = std::move(done)](store_result r) {
        if (r.outcome == store_result::accepted) r.value = value;
        done(std::move(r));
      });
}

void fenced_store::run(std::vector<std::string> args, handler done) {
  // Unfenced: token 0 is never newer than the mark, so the script would refuse it once a token was
  // recorded; an unfenced store gets the key without a fence instead (a resource that checks nothing).
  if (!fenced_) {
    const bool is_read = args[5] == "get";
    std::vector<std::string> plain = is_read ? std::vector<std::string>{"GET", args[3]}
                                             : std::vector<std::string>{"SET", args[3], args[7]};
    args = std::move(plain);
  }
  const bool plain = !fenced_;
  store_.async_command(std::move(args), [plain, done = std::move(done)](std::error_code ec, deadbolt::reply reply) {
    store_result r;
    if (ec) {
      r.error = ec.message();
      return done(std::move(r));
    }
    if (reply.is_error()) {
      r.error = "store error: " + reply.text;
      return done(std::move(r));
    }
    if (plain) {
      r.outcome = store_result::accepted;
      r.value = reply.as_int().value_or(0);
      return done(std::move(r));
    }
    // {1, newest, value?} accepted; {0, newest} refused as stale.
    const auto& e = reply.elements;
    if (e.size() < 2 || !e[0].as_int()) {
      r.error = "unexpected reply from the fenced-write script";
      return done(std::move(r));
    }
    if (*e[0].as_int() == 1) {
      r.outcome = store_result::accepted;
      r.value = e.size() > 2 ? e[2].as_int().value_or(0) : 0;
    } else {
      r.outcome = store_result::stale;
    }
    done(std::move(r));
  });
}

}  // namespace verify

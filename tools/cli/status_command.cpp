// deadbolt status: what Redis holds for a lock, as text or JSON.
#include <cstdio>
#include <string>
#include <vector>

#include "client_setup.hpp"
#include "commands.hpp"
#include "detail/keys.hpp"
#include "json.hpp"
#include "status_line.hpp"

namespace deadbolt::cli {
namespace {

struct lock_state {
  std::string type;                 // "hash", "string", "none", ...
  deadbolt::reply hash;             // HGETALL (a lock, read/write lock)
  std::string value;                // GET (a semaphore, latch)
  long long ttl_ms = -2;
  std::vector<std::string> queue;   // fair lock waiters
  std::string token;                // fencing token counter, "" if none
};

std::string field(const deadbolt::reply& hash, const std::string& key) {
  for (std::size_t i = 0; i + 1 < hash.elements.size(); i += 2) {
    if (hash.elements[i].text == key) return hash.elements[i + 1].text;
  }
  return {};
}

void print_text(const std::string& name, const lock_state& s) {
  if (s.type == "none") {
    std::printf("%s: not locked\n", name.c_str());
  } else if (s.type == "hash") {
    const std::string mode = field(s.hash, "mode");
    std::printf("%s: locked%s%s", name.c_str(), mode.empty() ? "" : " for ", mode.c_str());
    if (s.ttl_ms >= 0) std::printf(", ttl %s", format(std::chrono::milliseconds(s.ttl_ms)).c_str());
    if (s.ttl_ms == -1) std::printf(", no ttl");
    std::printf("\n");
    for (std::size_t i = 0; i + 1 < s.hash.elements.size(); i += 2) {
      if (s.hash.elements[i].text == "mode") continue;
      std::printf("  holder %s  holds %s\n", s.hash.elements[i].text.c_str(), s.hash.elements[i + 1].text.c_str());
    }
  } else {
    std::printf("%s: a %s%s%s\n", name.c_str(), s.type.c_str(), s.value.empty() ? "" : " = ", s.value.c_str());
  }
  if (!s.queue.empty()) {
    std::printf("  queue:");
    for (const auto& q : s.queue) std::printf(" %s", q.c_str());
    std::printf("\n");
  }
  if (!s.token.empty()) std::printf("  fencing token: %s\n", s.token.c_str());
}

void print_json(const std::string& name, const lock_state& s) {
  json out;
  out.begin_object();
  out.key("name").string(name);
  out.key("type").string(s.type);
  out.key("locked").boolean(s.type != "none");
  const std::string mode = field(s.hash, "mode");
  out.key("mode");
  if (mode.empty()) out.null(); else out.string(mode);
  out.key("ttl_ms").number(s.ttl_ms);
  out.key("holders").begin_array();
  for (std::size_t i = 0; i + 1 < s.hash.elements.size(); i += 2) {
    const std::string& f = s.hash.elements[i].text;
    if (f == "mode") continue;
    // "<36-char client uuid>:<owner id>[:write]"
    out.begin_object();
    out.key("field").string(f);
    out.key("client").string(f.substr(0, 36));
    out.key("owner").string(f.size() > 37 ? f.substr(37) : "");
    out.key("count").number(s.hash.elements[i + 1].as_int().value_or(0));
    out.end_object();
  }
  out.end_array();
  out.key("queue").begin_array();
  for (const auto& q : s.queue) out.string(q);
  out.end_array();
  out.key("fencing_token");
  if (s.token.empty()) out.null(); else out.number(std::stoll(s.token));
  if (s.type != "hash" && s.type != "none") out.key("value").string(s.value);
  out.end_object();
  std::printf("%s\n", out.text().c_str());
}

}  // namespace

int status_command(const options& o) {
  asio::io_context io;
  deadbolt::client client(io.get_executor(), make_config(o));
  if (auto ec = client.config_error()) return report_connect_error(o, ec);
  lock_state state;
  int code = exit_ok;
  const std::vector<std::vector<std::string>> queries{
      {"TYPE", o.name},
      {"PTTL", o.name},
      {"LRANGE", detail::prefix_name("redisson_lock_queue", o.name), "0", "-1"},
      {"GET", detail::prefix_name("redisson_lock_token", o.name)},
  };
  std::vector<deadbolt::reply> answers(queries.size());
  std::size_t pending = queries.size();
  bool failed = false;
  auto done = [&] {
    if (failed) return client.shutdown();
    state.type = answers[0].text;
    state.ttl_ms = answers[1].as_int().value_or(-2);
    for (const auto& e : answers[2].elements) state.queue.push_back(e.text);
    if (!answers[3].is_null()) state.token = answers[3].text;
    auto finish = [&] {
      if (o.json) print_json(o.name, state); else print_text(o.name, state);
      client.shutdown();
    };
    if (state.type == "hash") {
      client.async_command({"HGETALL", o.name}, [&, finish](std::error_code, deadbolt::reply r) {
        state.hash = std::move(r);
        finish();
      });
    } else if (state.type == "string") {
      client.async_command({"GET", o.name}, [&, finish](std::error_code, deadbolt::reply r) {
        state.value = r.text;
        finish();
      });
    } else {
      finish();
    }
  };
  for (std::size_t i = 0; i < queries.size(); ++i) {
    client.async_command(queries[i], [&, i](std::error_code ec, deadbolt::reply r) {
      if (ec && !failed) {
        failed = true;
        code = ec.category() == deadbolt::deadbolt_category() && ec != deadbolt::errc::not_connected
                   ? (std::fprintf(stderr, "deadbolt: %s\n", ec.message().c_str()), exit_failure)
                   : report_connect_error(o, ec);
      }
      answers[i] = std::move(r);
      if (--pending == 0) done();
    });
  }
  io.run();
  return code;
}

}  // namespace deadbolt::cli

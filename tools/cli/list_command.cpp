// deadbolt list [PATTERN]: the locks, semaphores and latches whose names match PATTERN (Redis's glob),
// with their holders and TTLs. The names are found with SCAN (on every master of a cluster, each
// through a connection of its own), at most --limit of them are looked at (status's reading), and
// what is not a lock, semaphore or latch is left out.
#include <cstdio>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "commands.hpp"
#include "connect.hpp"
#include "deadbolt/key_names.hpp"
#include "exit_codes.hpp"
#include "json.hpp"
#include "lock_reading.hpp"
#include "lock_state.hpp"

namespace deadbolt::cli {
namespace {

constexpr const char* queue_prefix = "redisson_lock_queue";

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A key beside an object (docs/protocol.md §0: a prefix or suffix around "{name}"), not an object's
// own: a fair lock's queue and deadlines, a fencing counter, a permit table, a read lock's timeouts,
// deadbolt run's holder info. Its object is found by its own name.
bool is_auxiliary(const std::string& key) {
  for (const char* p : {"redisson_lock_queue:", "redisson_lock_timeout:", "redisson_lock_token:", "deadbolt_holder:"}) {
    if (starts_with(key, p)) return true;
  }
  return key[0] == '{' && (ends_with(key, "}:timeout") || ends_with(key, ":rwlock_timeout"));
}

// The URL of one master of the cluster `url` names: the same scheme (TLS or not) and credentials.
std::string node_url(const std::string& url, const std::string& host, const std::string& port) {
  const auto scheme_end = url.find("://");
  std::string scheme = url.substr(0, scheme_end);
  if (const auto plus = scheme.find('+'); plus != std::string::npos) scheme.erase(plus);  // redis+cluster
  std::string rest = url.substr(scheme_end + 3);
  const auto at = rest.rfind('@');
  const std::string userinfo = at == std::string::npos ? "" : rest.substr(0, at + 1);
  const bool v6 = host.find(':') != std::string::npos;
  return scheme + "://" + userinfo + (v6 ? "[" + host + "]" : host) + ":" + port;
}

class lister {
 public:
  explicit lister(const options& o) : o_(o), session_(o) {}

  int run() {
    return session_.run([this] { find_nodes(); });
  }

 private:
  // The servers to scan: the one server, or every master of the cluster (CLUSTER SLOTS names them).
  void find_nodes() {
    deadbolt::endpoint ep;
    (void)deadbolt::parse_url(o_.url, ep);
    if (!ep.is_cluster()) {
      scanners_.push_back(&session_.client);
      return scan(0, "0", 0);
    }
    session_.client.async_command({"CLUSTER", "SLOTS"}, [this, ep](std::error_code ec, deadbolt::reply r) {
      if (ec) return finish(report_error(o_, ec, "cannot read the cluster's layout"));
      std::set<std::pair<std::string, std::string>> masters;
      for (const auto& range : r.elements) {
        if (range.elements.size() < 3 || range.elements[2].elements.size() < 2) continue;
        const auto& node = range.elements[2].elements;
        std::string host = node[0].text.empty() ? ep.host : node[0].text;
        masters.emplace(std::move(host), node[1].text);
      }
      for (const auto& [host, port] : masters) {
        options one = o_;
        one.url = node_url(o_.url, host, port);
        node_clients_.push_back(std::make_unique<deadbolt::client>(session_.io.get_executor(), make_config(one)));
        scanners_.push_back(node_clients_.back().get());
      }
      if (scanners_.empty()) return finish(report_error(o_, deadbolt::errc::cluster_down, "cannot read the cluster's layout"));
      scan(0, "0", 0);
    });
  }

  // SCAN on server `node` from `cursor`; pass 0 finds objects' own keys, pass 1 fair locks that are
  // free with waiters queued (only their queue is left).
  void scan(std::size_t node, const std::string& cursor, int pass) {
    const std::string match = pass == 0 ? o_.name : deadbolt::prefix_name(queue_prefix, o_.name);
    scanners_[node]->async_command({"SCAN", cursor, "MATCH", match, "COUNT", "512"},
                                   [this, node, pass](std::error_code ec, deadbolt::reply r) {
      if (ec) return finish(report_error(o_, ec, "cannot list the names"));
      if (r.elements.size() != 2) return finish(report_error(o_, deadbolt::errc::protocol_error, "cannot list the names"));
      for (const auto& key : r.elements[1].elements) {
        std::string name = key.text;
        if (pass == 1) {
          name = name.substr(std::char_traits<char>::length(queue_prefix) + 1);
          if (name.size() >= 2 && name.front() == '{' && name.back() == '}') name = name.substr(1, name.size() - 2);
        } else if (name.empty() || is_auxiliary(name)) {
          continue;
        }
        if (names_.size() == o_.limit && names_.count(name) == 0) {
          truncated_ = true;
          return read_next();
        }
        names_.insert(std::move(name));
      }
      const std::string& next = r.elements[0].text;
      if (next != "0") return scan(node, next, pass);
      if (pass == 0) return scan(node, "0", 1);
      if (node + 1 < scanners_.size()) return scan(node + 1, "0", 0);
      read_next();
    });
  }

  // One name at a time (through the client that routes by name), in name order.
  void read_next() {
    if (names_.empty()) return print();
    const std::string name = *names_.begin();
    names_.erase(names_.begin());
    read_lock_state(session_.client, name, [this, name](std::error_code ec, lock_state state) {
      if (ec) return finish(report_error(o_, ec, "cannot read " + name));
      const auto kind = state.object.kind;
      if (kind != deadbolt::object_kind::none && kind != deadbolt::object_kind::other) {
        found_.emplace_back(name, std::move(state));
      }
      read_next();
    });
  }

  void print() {
    if (o_.json) {
      json out;
      out.begin_array();
      for (const auto& [name, state] : found_) write_json(out, name, state);
      out.end_array();
      std::printf("%s\n", out.text().c_str());
    } else if (!found_.empty()) {
      std::printf("%-24s %-19s %-24s %-8s %s\n", "NAME", "KIND", "STATE", "TTL", "HOLDER");
      for (const auto& [name, state] : found_) print_line(name, state);
    }
    if (truncated_) {
      std::fprintf(stderr, "deadbolt: more names match '%s': the first %zu were looked at (--limit)\n", o_.name.c_str(),
                   o_.limit);
    }
    finish(exit_ok);
  }

  void finish(int code) {
    for (auto& c : node_clients_) c->shutdown();
    session_.finish(code);
  }

  const options& o_;
  one_shot session_;
  std::vector<std::unique_ptr<deadbolt::client>> node_clients_;  // a cluster's masters, to scan
  std::vector<deadbolt::client*> scanners_;
  std::set<std::string> names_;
  bool truncated_ = false;
  std::vector<std::pair<std::string, lock_state>> found_;
};

}  // namespace

int list_command(const options& o) { return lister(o).run(); }

}  // namespace deadbolt::cli

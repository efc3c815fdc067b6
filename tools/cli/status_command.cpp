// deadbolt status: read what Redis holds for NAME (its key, a fair lock's queue, the fencing token, a
// permit-expirable semaphore's permits, deadbolt's holder info keys) and print it.
#include <array>
#include <cstdlib>
#include <string>
#include <vector>

#include "commands.hpp"
#include "connect.hpp"
#include "detail/keys.hpp"
#include "exit_codes.hpp"
#include "lock_state.hpp"

namespace deadbolt::cli {
namespace {

using replies = std::vector<deadbolt::reply>;

// A permit's ZSET member: its id's 16 raw bytes (Redisson before 3.17: the hex text itself).
std::string permit_text(const std::string& member) {
  if (member.size() != 16) return member;
  std::array<unsigned char, 16> bytes{};
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>(member[i]);
  return deadbolt::permit_id(bytes).hex();
}

// Redisson's score for a permit without lease (docs/protocol.md §9).
constexpr std::int64_t never_expires = 922337203685477;

// ZRANGE ... WITHSCORES: flat (RESP2) or as [member, score] pairs (RESP3).
void add_permits(const deadbolt::reply& r, lock_state& s) {
  auto add = [&](const deadbolt::reply& member, const deadbolt::reply& score) {
    lock_holder h;
    h.field = permit_text(member.text);
    h.count = 1;
    const auto expiry = static_cast<std::int64_t>(std::strtod(score.text.c_str(), nullptr));
    if (expiry != never_expires) h.expires_ms = expiry;
    s.holders.push_back(std::move(h));
  };
  for (std::size_t i = 0; i < r.elements.size(); ++i) {
    const auto& e = r.elements[i];
    if (e.elements.size() == 2) {
      add(e.elements[0], e.elements[1]);
    } else if (i + 1 < r.elements.size()) {
      add(e, r.elements[i + 1]);
      ++i;
    }
  }
}

class status_query {
 public:
  explicit status_query(const options& o) : o_(o), client_(io_.get_executor(), make_config(o)), connector_(io_, client_, o) {}

  int run() {
    connector_.start(o_.connect_timeout, [this](int code) {
      if (code != 0) return finish(code);
      read_keys();
    });
    io_.run();
    return code_;
  }

 private:
  // Sends `commands` at once (one pipeline); `done` gets the replies once all have come. A missing or
  // foreign auxiliary key (an error reply) reads as empty; a connection failure ends the status.
  template <typename Done>
  void ask(std::vector<std::vector<std::string>> commands, Done done) {
    auto answers = std::make_shared<replies>(commands.size());
    auto pending = std::make_shared<std::size_t>(commands.size());
    if (commands.empty()) return done(*answers);
    for (std::size_t i = 0; i < commands.size(); ++i) {
      client_.async_command(std::move(commands[i]), [this, i, answers, pending, done](std::error_code ec, deadbolt::reply r) {
        if (ec && ec != deadbolt::errc::wrong_type && ec != deadbolt::errc::server_error && !failed_) {
          failed_ = true;
          finish(report_error(o_, ec, "cannot read " + o_.name));
        }
        (*answers)[i] = std::move(r);
        if (--*pending == 0 && !failed_) done(*answers);
      });
    }
  }

  void read_keys() {
    ask({{"TYPE", o_.name},
         {"PTTL", o_.name},
         {"LRANGE", detail::prefix_name("redisson_lock_queue", o_.name), "0", "-1"},
         {"GET", detail::prefix_name("redisson_lock_token", o_.name)},
         {"ZRANGE", detail::suffix_name(o_.name, "timeout"), "0", "-1", "WITHSCORES"}},
        [this](const replies& r) {
          state_.type = r[0].text;
          state_.ttl_ms = r[1].as_int().value_or(-2);
          for (const auto& e : r[2].elements) state_.queue.push_back(e.text);
          if (!r[3].is_null()) state_.token = r[3].as_int();
          if (state_.type == "hash") return read_hash();
          if (state_.type == "string") return read_value(r[4]);
          print();
        });
  }

  void read_hash() {
    ask({{"HGETALL", o_.name}}, [this](const replies& r) {
      const auto& fields = r[0].elements;
      for (std::size_t i = 0; i + 1 < fields.size(); i += 2) {
        if (fields[i].text == "mode") {
          state_.mode = fields[i + 1].text;
          continue;
        }
        state_.holders.push_back({fields[i].text, fields[i + 1].as_int().value_or(0), std::nullopt, std::nullopt});
      }
      read_holder_info();
    });
  }

  void read_value(const deadbolt::reply& permits) {
    ask({{"GET", o_.name}}, [this, permits](const replies& r) {
      state_.value = r[0].text;
      state_.has_permits = !permits.elements.empty();
      add_permits(permits, state_);
      read_holder_info();
    });
  }

  void read_holder_info() {
    std::vector<std::vector<std::string>> gets;
    for (const auto& h : state_.holders) gets.push_back({"GET", holder_info_key(o_.name, h.field)});
    ask(std::move(gets), [this](const replies& r) {
      for (std::size_t i = 0; i < r.size(); ++i) {
        if (!r[i].is_null()) state_.holders[i].info = decode_holder_info(r[i].text);
      }
      print();
    });
  }

  void print() {
    if (o_.json) print_json(o_.name, state_); else print_text(o_.name, state_);
    finish(exit_ok);
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
  bool failed_ = false;
  int code_ = exit_failure;
};

}  // namespace

int status_command(const options& o) { return status_query(o).run(); }

}  // namespace deadbolt::cli

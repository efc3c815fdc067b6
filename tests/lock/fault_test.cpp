// Fault injection against a real redis-server (its own fixture: these tests stop, restart and pause
// it): a restarted server, killed connections, a paused server, a holder cut off from the server, a
// SIGKILLed holder process, and an unlock whose first attempt is ambiguous. Short timeouts keep the
// suite fast; every wait is bounded.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <future>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "deadbolt/deadbolt.hpp"
#include "support/redis_server.hpp"
#include "support/refused.hpp"
#include "support/sync.hpp"
#include "support/tcp_proxy.hpp"

extern char** environ;

using namespace std::chrono_literals;
using deadbolt::errc;
using deadbolt::test::call;
using deadbolt::test::none;
using deadbolt::test::outcome;
using clock_type = std::chrono::steady_clock;
using deadbolt::test::tcp_proxy;
using deadbolt::test::eventually;

namespace {

constexpr auto lease = 450ms;            // watchdog_timeout: renewed every 150 ms
constexpr auto command_timeout = 300ms;

deadbolt::config fast_config(const deadbolt::test::redis_server& redis) {
  deadbolt::config cfg;
  cfg.url = redis.url();
  cfg.watchdog_timeout = lease;
  cfg.command_timeout = command_timeout;
  cfg.connect_timeout = 1000ms;
  cfg.reconnect_min = 10ms;
  cfg.reconnect_max = 100ms;
  return cfg;
}

std::string unique_name(const char* base) {
  static std::atomic<int> n{0};
  return std::string(base) + "-" + std::to_string(::getpid()) + "-" + std::to_string(n++);
}

std::string channel_of(const std::string& name) { return "redisson_lock__channel:{" + name + "}"; }

std::chrono::milliseconds since(clock_type::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now() - t);
}

/// Subscribers of `channel` on the server (PUBSUB NUMSUB).
int subscribers(const deadbolt::test::redis_server& redis, const std::string& channel) {
  const std::string out = redis.cli("pubsub numsub '" + channel + "'");
  const auto nl = out.rfind('\n');
  return nl == std::string::npos ? -1 : std::atoi(out.c_str() + nl + 1);
}

/// Ids of the server's connections named `client_name` (CLIENT LIST).
std::vector<std::string> connections_named(const deadbolt::test::redis_server& redis, const std::string& client_name) {
  std::vector<std::string> ids;
  std::istringstream lines(redis.cli("client list"));
  std::string line;
  while (std::getline(lines, line)) {
    if (line.find(" name=" + client_name + " ") == std::string::npos) continue;
    if (line.compare(0, 3, "id=") != 0) continue;
    ids.push_back(line.substr(3, line.find(' ') - 3));
  }
  return ids;
}

/// The lease-lost handler's calls, "name/owner" with the time each arrived (on the client's executor).
class lease_log {
 public:
  deadbolt::detail::lease_lost_handler handler() {
    return [self = state_](std::string_view name, std::int64_t owner) {
      std::lock_guard<std::mutex> g(self->mutex);
      self->events.push_back({std::string(name) + "/" + std::to_string(owner), clock_type::now()});
      self->changed.notify_all();
    };
  }
  /// Waits up to `limit` for `key`; returns when it arrived (or nothing).
  bool wait_for(const std::string& key, std::chrono::milliseconds limit, clock_type::time_point* when = nullptr) {
    std::unique_lock<std::mutex> g(state_->mutex);
    const bool found = state_->changed.wait_for(g, limit, [&] { return find(key) != nullptr; });
    if (found && when != nullptr) *when = find(key)->at;
    return found;
  }
  std::size_t size() {
    std::lock_guard<std::mutex> g(state_->mutex);
    return state_->events.size();
  }

 private:
  struct event {
    std::string key;
    clock_type::time_point at;
  };
  struct state {
    std::mutex mutex;
    std::condition_variable changed;
    std::vector<event> events;
  };
  const event* find(const std::string& key) const {
    for (const auto& e : state_->events) {
      if (e.key == key) return &e;
    }
    return nullptr;
  }
  std::shared_ptr<state> state_ = std::make_shared<state>();
};

/// An operation's result and when it arrived.
template <typename T>
struct timed {
  outcome<T> result;
  clock_type::time_point at;
};

/// Starts an async operation and returns a future for its result (like call(), without waiting).
template <typename T = none, typename Start>
std::future<timed<T>> start(Start&& begin) {
  auto promise = std::make_shared<std::promise<timed<T>>>();
  auto future = promise->get_future();
  begin([promise](std::error_code ec, auto&&... v) {
    if constexpr (sizeof...(v) == 0) {
      promise->set_value({outcome<T>{ec, T{}}, clock_type::now()});
    } else {
      promise->set_value({outcome<T>{ec, T(v...)}, clock_type::now()});
    }
  });
  return future;
}

template <typename T>
bool pending(const std::future<T>& f) {
  return f.wait_for(0s) == std::future_status::timeout;
}

bool is_connection_error(std::error_code ec) {
  return deadbolt::test::is_refused(ec) || ec == errc::not_connected;
}

// ---- a child process holding a lock ------------------------------------------------------------------

/// Runs tests/lock/lock_holder_main.cpp (under the cross-compiling emulator, if any) with its stdout on
/// a pipe; kill() sends SIGKILL.
class holder_process {
 public:
  holder_process(const std::string& url, const std::string& name, std::chrono::milliseconds lease_ms,
                 std::chrono::milliseconds watchdog_ms) {
    std::vector<std::string> words;
    std::istringstream emulator(LOCK_HOLDER_EMULATOR);
    for (std::string w; emulator >> w;) words.push_back(w);
    words.insert(words.end(), {LOCK_HOLDER_PATH, url, name, std::to_string(lease_ms.count()),
                               std::to_string(watchdog_ms.count())});
    std::vector<char*> argv;
    for (auto& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);

    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    ::fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, fds[1]);
    const int rc = ::posix_spawnp(&pid_, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    out_ = fds[0];
    REQUIRE_MESSAGE(rc == 0, "cannot spawn " << argv[0]);
  }
  ~holder_process() {
    kill();
    ::close(out_);
  }
  holder_process(const holder_process&) = delete;
  holder_process& operator=(const holder_process&) = delete;

  /// Reads the child's stdout until a line arrives (or `limit` passes); returns it.
  std::string read_line(std::chrono::milliseconds limit) {
    const auto end = clock_type::now() + limit;
    std::string line;
    while (clock_type::now() < end) {
      pollfd p{out_, POLLIN, 0};
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - clock_type::now());
      if (::poll(&p, 1, static_cast<int>(std::max<std::int64_t>(1, left.count()))) <= 0) continue;
      char ch;
      if (::read(out_, &ch, 1) != 1) break;  // the child is gone
      if (ch == '\n') return line;
      line += ch;
    }
    return line;
  }
  void kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
  }

 private:
  pid_t pid_ = -1;
  int out_ = -1;
};

}  // namespace

TEST_CASE("a restarted server: the holder hears its lease is lost, the waiter acquires") {
  deadbolt::test::redis_server redis;
  auto lost = std::make_shared<lease_log>();
  deadbolt::test::io_thread io;
  deadbolt::client a(io.executor(), fast_config(redis));
  deadbolt::client b(io.executor(), fast_config(redis));
  a.on_lease_lost(lost->handler());
  const std::string name = unique_name("restart");
  auto la = a.lock(name);
  auto lb = b.lock(name);

  REQUIRE_FALSE(call([&](auto cb) { la.async_lock(1, cb); }).ec);  // watchdog
  auto waiter = start<bool>([&](auto cb) { lb.async_try_lock(2, 20s, 0ms, cb); });
  REQUIRE(eventually([&] { return subscribers(redis, channel_of(name)) == 1; }, 2s));
  CHECK(pending(waiter));

  redis.stop();
  std::this_thread::sleep_for(50ms);  // the clients notice and start reconnecting

  // Requests made while the server is down fail with the reason, within about command_timeout.
  auto t0 = clock_type::now();
  auto down = call<bool>([&](auto cb) { la.async_is_locked(cb); });
  CHECK(is_connection_error(down.ec));
  CHECK(since(t0) < command_timeout + 300ms);
  t0 = clock_type::now();
  auto acquire_down = call<bool>([&](auto cb) { a.lock(unique_name("down")).async_try_lock(3, cb); });
  CHECK(is_connection_error(acquire_down.ec));
  CHECK_FALSE(acquire_down.value);
  CHECK(since(t0) < command_timeout + 300ms);
  CHECK(pending(waiter));  // a waiter with time left does not give up because of the outage

  redis.start();  // empty: the server keeps no data
  const auto restarted = clock_type::now();

  // The waiter re-checks (resubscription or its timer), finds the lock free and takes it.
  REQUIRE(waiter.wait_for(5s) == std::future_status::ready);
  const auto got = waiter.get();
  CHECK_FALSE(got.result.ec);
  CHECK(got.result.value);
  CHECK(redis.cli("hget " + name + " " + b.id() + ":2") == "1");

  // The holder is told: its renewal found the lock gone.
  clock_type::time_point lost_at;
  REQUIRE(lost->wait_for(name + "/1", 3s, &lost_at));
  CHECK(lost_at - restarted < lease * 3);
  CHECK(call<bool>([&](auto cb) { la.async_lease_lost(1, cb); }).value);

  // Requests work again.
  auto up = call<bool>([&](auto cb) { la.async_is_locked(cb); });
  CHECK_FALSE(up.ec);
  CHECK(up.value);
  CHECK(call([&](auto cb) { la.async_unlock(1, cb); }).ec == errc::lease_lost);
  CHECK_FALSE(call([&](auto cb) { lb.async_unlock(2, cb); }).ec);
  CHECK(redis.cli("exists " + name) == "0");
  CHECK(lost->size() == 1);
}

TEST_CASE("killed connections: renewal resumes after reconnect and the waiter still wakes") {
  deadbolt::test::redis_server redis;
  auto lost = std::make_shared<lease_log>();
  deadbolt::test::io_thread io;
  auto cfg = fast_config(redis);
  cfg.client_name = unique_name("killed");
  deadbolt::client a(io.executor(), cfg);
  a.on_lease_lost(lost->handler());
  const std::string name = unique_name("kill");
  auto lock = a.lock(name);
  const std::string field = a.id() + ":1";

  REQUIRE_FALSE(call([&](auto cb) { lock.async_lock(1, cb); }).ec);  // watchdog
  auto waiter = start<bool>([&](auto cb) { lock.async_try_lock(2, 20s, 0ms, cb); });
  REQUIRE(eventually([&] { return subscribers(redis, channel_of(name)) == 1; }, 2s));

  for (int round = 0; round < 3; ++round) {
    CAPTURE(round);
    // Both connections: the command connection and the subscriber.
    const auto ids = connections_named(redis, cfg.client_name);
    REQUIRE(ids.size() == 2);
    for (const auto& id : ids) CHECK(redis.cli("client kill id " + id) == "1");
    // Both come back, and the subscriber subscribes again (its waiter is still parked).
    CHECK(eventually([&] { return connections_named(redis, cfg.client_name).size() == 2; }, 2s));
    CHECK(eventually([&] { return subscribers(redis, channel_of(name)) == 1; }, 2s));
    std::this_thread::sleep_for(lease / 2);
  }

  // Several leases later the lock is still ours: renewal resumed on the new connection.
  std::this_thread::sleep_for(lease * 2);
  CHECK(redis.cli("hget " + name + " " + field) == "1");
  CHECK(std::stoi(redis.cli("pttl " + name)) > 0);
  CHECK(lost->size() == 0);
  CHECK(pending(waiter));

  // The waiter wakes on the unlock message, well before the lease would have let it re-check.
  const auto released = clock_type::now();
  REQUIRE_FALSE(call([&](auto cb) { lock.async_unlock(1, cb); }).ec);
  REQUIRE(waiter.wait_for(3s) == std::future_status::ready);
  const auto got = waiter.get();
  CHECK_FALSE(got.result.ec);
  CHECK(got.result.value);
  CHECK(got.at - released < 300ms);  // the message; a re-check would wait out the lease (450 ms)
  CHECK(redis.cli("hget " + name + " " + a.id() + ":2") == "1");
  CHECK_FALSE(call([&](auto cb) { lock.async_unlock(2, cb); }).ec);
  CHECK(lost->size() == 0);
}

TEST_CASE("a paused server: the lease is declared lost in time, requests time out, the client recovers") {
  deadbolt::test::redis_server redis;
  auto lost = std::make_shared<lease_log>();
  auto waiter_lost = std::make_shared<lease_log>();
  deadbolt::test::io_thread io;
  deadbolt::client a(io.executor(), fast_config(redis));
  deadbolt::client b(io.executor(), fast_config(redis));
  deadbolt::client w(io.executor(), fast_config(redis));
  a.on_lease_lost(lost->handler());
  w.on_lease_lost(waiter_lost->handler());
  const std::string name = unique_name("pause");
  const std::string other = unique_name("pause-other");
  auto la = a.lock(name);
  auto lb = b.lock(name);
  auto lw = w.lock(name);
  REQUIRE_FALSE(call([&](auto cb) { la.async_lock(1, cb); }).ec);  // watchdog
  REQUIRE_FALSE(call([&](auto cb) { b.async_connect(cb); }).ec);
  auto waiter = start<bool>([&](auto cb) { lw.async_try_lock(2, 10s, 0ms, cb); });  // watchdog too
  REQUIRE(eventually([&] { return subscribers(redis, channel_of(name)) == 1; }, 2s));

  const auto before_ttl = clock_type::now();
  const std::chrono::milliseconds ttl(std::stoi(redis.cli("pttl " + name)));  // the lease last renewed
  redis.pause();
  const auto paused = clock_type::now();
  struct resume_on_exit {
    const deadbolt::test::redis_server& r;
    ~resume_on_exit() { r.resume(); }
  } guard{redis};

  // Requests in flight get no answer: they time out (an acquire cannot know whether it ran).
  auto query = start<bool>([&](auto cb) { lb.async_is_locked(cb); });
  auto acquire = start<bool>([&](auto cb) { b.lock(other).async_try_lock(5, cb); });
  REQUIRE(query.wait_for(command_timeout * 3) == std::future_status::ready);
  const auto q = query.get();
  CHECK(q.result.ec == errc::timed_out);
  CHECK(q.at - paused >= command_timeout - 10ms);
  REQUIRE(acquire.wait_for(command_timeout * 5) == std::future_status::ready);
  const auto acq = acquire.get();
  CHECK((acq.result.ec == errc::outcome_unknown || acq.result.ec == errc::timed_out));
  CHECK_FALSE(acq.result.value);

  // Not confirmed for a whole lease: the holder is told when its last confirmed lease ends; not while
  // the lease last seen on the server still runs, and not a renewal period later either.
  clock_type::time_point lost_at;
  REQUIRE(lost->wait_for(name + "/1", lease * 3, &lost_at));
  CHECK(lost_at >= before_ttl + ttl - 20ms);
  CHECK(lost_at <= paused + lease + 100ms);
  CHECK(call<bool>([&](auto cb) { la.async_lease_lost(1, cb); }).value);
  CHECK(pending(waiter));  // its re-checks time out too, but it has time left

  std::this_thread::sleep_for(lease);  // paused for about three leases in all
  const auto resumed = clock_type::now();  // nothing can be answered before this
  redis.resume();

  // The waiter resumes and takes the lapsed lock, after its old holder was told.
  REQUIRE(waiter.wait_for(3s) == std::future_status::ready);
  const auto got = waiter.get();
  CHECK_FALSE(got.result.ec);
  CHECK(got.result.value);
  CHECK(got.at >= resumed);
  CHECK(lost_at < got.at);
  // ...and keeps it under the watchdog, although its acquisition had to be confirmed after a timeout.
  std::this_thread::sleep_for(lease * 3);
  CHECK(redis.cli("hget " + name + " " + w.id() + ":2") == "1");
  CHECK(waiter_lost->size() == 0);

  // Recovery: requests work again.
  auto after = call<bool>([&](auto cb) { lb.async_is_locked(cb); });
  CHECK_FALSE(after.ec);
  CHECK(after.value);
  CHECK(call([&](auto cb) { la.async_unlock(1, cb); }).ec == errc::lease_lost);
  CHECK_FALSE(call<bool>([&](auto cb) { la.async_try_lock(1, cb); }).value);
  CHECK_FALSE(call([&](auto cb) { lw.async_unlock(2, cb); }).ec);
  REQUIRE_FALSE(call([&](auto cb) { la.async_lock(1, cb); }).ec);
  std::this_thread::sleep_for(lease * 2);  // renewed again under the watchdog
  CHECK(redis.cli("hget " + name + " " + a.id() + ":1") == "1");
  CHECK_FALSE(call<bool>([&](auto cb) { la.async_lease_lost(1, cb); }).value);
  CHECK_FALSE(call([&](auto cb) { la.async_unlock(1, cb); }).ec);
  CHECK(lost->size() == 1);
}

TEST_CASE("a partitioned holder is told its lease is lost no later than another client can take it") {
  deadbolt::test::redis_server redis;
  auto lost = std::make_shared<lease_log>();
  tcp_proxy link(redis.port());
  deadbolt::test::io_thread io;
  auto cfg = fast_config(redis);
  cfg.url = link.url();
  deadbolt::client a(io.executor(), cfg);  // reaches the server through `link` only
  deadbolt::client b(io.executor(), fast_config(redis));
  a.on_lease_lost(lost->handler());
  const std::string first = unique_name("partition-first");
  const std::string second = unique_name("partition-second");

  // The watchdog ticks from the first acquisition; the second lock is taken between two ticks, so its
  // lease ends between two ticks as well.
  REQUIRE_FALSE(call([&](auto cb) { a.lock(first).async_lock(1, cb); }).ec);
  std::this_thread::sleep_for(lease / 3 + 30ms);  // just after the first renewal
  REQUIRE_FALSE(call([&](auto cb) { a.lock(second).async_lock(1, cb); }).ec);
  link.freeze();  // from now on `a` cannot renew anything

  auto taken = start<bool>([&](auto cb) { b.lock(second).async_try_lock(2, 5s, 0ms, cb); });
  REQUIRE(taken.wait_for(3s) == std::future_status::ready);
  const auto got = taken.get();
  REQUIRE_FALSE(got.result.ec);
  REQUIRE(got.result.value);
  clock_type::time_point lost_at;
  REQUIRE(lost->wait_for(second + "/1", 2s, &lost_at));
  // The lease ends (and `b` gets the lock) at the same moment `a` stops counting on it; allow only
  // for timer jitter, not for waiting for the watchdog's next tick.
  INFO("told " << std::chrono::duration_cast<std::chrono::milliseconds>(lost_at - got.at).count()
                << " ms after the lock was taken");
  CHECK(lost_at <= got.at + 25ms);
  CHECK(lost->wait_for(first + "/1", 2s));
  CHECK_FALSE(call([&](auto cb) { b.lock(second).async_unlock(2, cb); }).ec);
}

TEST_CASE("a SIGKILLed holder's lock frees only when its lease runs out") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client c(io.executor(), fast_config(redis));

  struct variant {
    const char* what;
    std::chrono::milliseconds lease_ms, watchdog_ms;
  };
  for (const variant v : {variant{"fixed lease", 1000ms, 0ms}, variant{"watchdog", 0ms, 600ms}}) {
    CAPTURE(v.what);
    const std::string name = unique_name("killed-holder");
    auto lock = c.lock(name);
    holder_process holder(redis.url(), name, v.lease_ms, v.watchdog_ms > 0ms ? v.watchdog_ms : 30000ms);
    REQUIRE(holder.read_line(10s) == "locked");
    if (v.watchdog_ms > 0ms) {
      std::this_thread::sleep_for(v.watchdog_ms * 3 / 2);  // past one lease: the holder renews it
      CHECK(redis.cli("exists " + name) == "1");
    }
    holder.kill();

    // Still held by the dead process, until its lease runs out.
    const auto before_ttl = clock_type::now();
    const int ttl = std::stoi(redis.cli("pttl " + name));
    const auto after_ttl = clock_type::now();
    REQUIRE(ttl > 0);
    CHECK(redis.cli("hlen " + name) == "1");
    auto now_or_never = call<bool>([&](auto cb) { lock.async_try_lock(2, cb); });
    CHECK_FALSE(now_or_never.ec);
    CHECK_FALSE(now_or_never.value);

    auto waited = start<bool>([&](auto cb) { lock.async_try_lock(2, 5s, 0ms, cb); });
    REQUIRE(waited.wait_for(10s) == std::future_status::ready);
    const auto got = waited.get();
    CHECK_FALSE(got.result.ec);
    CHECK(got.result.value);
    CHECK(got.at >= before_ttl + std::chrono::milliseconds(ttl) - 5ms);   // not before the lease
    CHECK(got.at <= after_ttl + std::chrono::milliseconds(ttl) + 300ms);  // and soon after it
    CHECK_FALSE(call([&](auto cb) { lock.async_unlock(2, cb); }).ec);
  }
}

TEST_CASE("an unlock retried after an ambiguous timeout releases one hold, not two") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  auto cfg = fast_config(redis);
  cfg.connect_timeout = 2000ms;  // the reconnection waits for the paused server's handshake reply
  deadbolt::client a(io.executor(), cfg);
  const std::string name = unique_name("unlock-retry");
  const std::string field = a.id() + ":1";
  auto lock = a.lock(name);
  REQUIRE_FALSE(call([&](auto cb) { lock.async_lock(1, 10s, cb); }).ec);  // fixed lease: no renewal traffic
  REQUIRE_FALSE(call([&](auto cb) { lock.async_lock(1, 10s, cb); }).ec);
  REQUIRE(redis.cli("hget " + name + " " + field) == "2");
  REQUIRE(redis.cli("config resetstat") == "OK");

  // The first attempt reaches the paused server but gets no reply: it times out, the connection is
  // dropped, and the retry (same request id) waits for the reconnection. On resume the server runs
  // both: the first from the old connection's buffer, the retry on the new one.
  redis.pause();
  auto unlocked = start([&](auto cb) { lock.async_unlock(1, cb); });
  std::this_thread::sleep_for(command_timeout + 150ms);
  CHECK(pending(unlocked));
  redis.resume();
  REQUIRE(unlocked.wait_for(3s) == std::future_status::ready);
  CHECK_FALSE(unlocked.get().result.ec);

  CHECK(redis.calls_of("evalsha") == 2);  // both attempts ran...
  CHECK(redis.cli("hget " + name + " " + field) == "1");  // ...and released one hold between them

  CHECK_FALSE(call([&](auto cb) { lock.async_unlock(1, cb); }).ec);
  CHECK(redis.cli("exists " + name) == "0");
}

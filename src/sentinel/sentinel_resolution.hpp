// Where the master is, according to Sentinel: the decisions of one address source
// (src/sentinel/sentinel_addresses.*), without I/O: no Asio, no sockets, no clock. The driver asks a
// sentinel SENTINEL GET-MASTER-ADDR-BY-NAME and SENTINEL REPLICAS in one write when told to, and
// tells the core what came of it; tests/core/sentinel_resolution_test.cpp drives it with no server.
//
// The rules it keeps:
//   - a round (address_source::next()) asks the sentinels one at a time, each question starting at
//     the sentinel the client prefers at that moment (sentinel_preference, shared by every source of
//     the client): the last one that named the master, or the one after the last that could not say;
//   - a sentinel that cannot say (unreachable, silent past sentinel_answer_bound(), a name it does not
//     know, a reply that is no address) moves the preference on, and the next one is asked, but not
//     from inside the failing connection's callbacks (ask_soon, then resume());
//   - when each sentinel was asked once and none named the master, the round fails with
//     errc::unknown_master if one of them answered that it does not know the name, else with what the
//     last one said; the connection backs off and starts another round;
//   - a round that starts after a +switch-master the watch announced (master_switch) is answered with
//     the new master at once, without asking, once per switch; it names no replicas;
//   - one question at a time: a round started while one is out takes its answer; an answer that comes
//     after cancel() only moves the preference; after stop() nothing is asked, answered or moved.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <system_error>
#include <vector>

#include "base/server_address.hpp"
#include "deadbolt/config.hpp"

namespace deadbolt::detail {

/// The last +switch-master a sentinel announced for the URL's master (src/sentinel/sentinel_watch.hpp),
/// shared by the client's address sources: the first connect after a switch goes straight to the new
/// master, not to a sentinel that may not have heard of the switch yet and name the old one (which
/// answers ROLE as a master until Sentinel demotes it, seconds later).
struct master_switch {
  server_address to;
  std::uint64_t count = 0;  // switches so far
};

/// Which sentinel the client's sources ask first: the last one that named the master (or the one
/// after the last one that failed to), shared by them all.
struct sentinel_preference {
  std::size_t first = 0;  // index in the URL's sentinels (endpoint::sentinels)
};

/// How long a sentinel has to answer (connecting and logging in included) before the next one is
/// asked: a quarter of the shorter of config::connect_timeout and command_timeout (at least 1 ms), well
/// below the deadline of the requests that wait for the master's address, so that a silent sentinel
/// or two leave time for the others to answer and the request to be sent.
std::chrono::milliseconds sentinel_answer_bound(const config& cfg);

class sentinel_resolution {
 public:
  struct action {
    enum class kind : std::uint8_t {
      none,      ///< nothing to do until the next event
      ask,       ///< ask sentinel `sentinel` (index in the URL's list); then answered() or failed()
      ask_soon,  ///< call resume() once the current callback has returned (post it)
      answer,    ///< give the round's sink `address`; replicas() are those named with it
      fail,      ///< give the round's sink `error`
    };
    kind what = kind::none;
    std::size_t sentinel = 0;
    server_address address;
    std::error_code error;
  };

  /// `sentinels`: how many the URL names. `preference` is shared with the client's other sources;
  /// `announced` (may be null: no watch) with the sentinel watch's owner. Both outlive the core. A
  /// switch announced before the core was made is not answered: the sentinels already name its master.
  sentinel_resolution(std::size_t sentinels, sentinel_preference& preference, const master_switch* announced);

  // ---- events ----
  /// address_source::next(): a new round (replaces one still open).
  action start_round();
  /// The sentinel asked named `master`, and with it `replicas` (those it does not think down).
  action answered(const server_address& master, const std::vector<server_address>& replicas);
  /// The sentinel asked could not say: `why` (its connection's error, a timeout, errc::unknown_master,
  /// errc::protocol_error, ...).
  action failed(std::error_code why);
  /// The turn ask_soon asked for.
  action resume();
  /// address_source::cancel(): nobody waits for the round any more (a question out still moves the
  /// preference when it is answered).
  void cancel() noexcept { waiting_ = false; }
  /// For good: nothing is asked or answered again.
  void stop() noexcept;

  // ---- state ----
  /// A question is out (answered() or failed() is expected).
  bool asking() const noexcept { return asking_; }
  /// The sentinel asked now, or last.
  std::size_t sentinel_asked() const noexcept { return sentinel_; }
  /// The replicas named with the last answer; none while a question is out, after a failure or with
  /// an announced switch.
  const std::vector<server_address>& replicas() const noexcept { return replicas_; }

 private:
  action ask();

  std::size_t count_;
  sentinel_preference& preference_;
  const master_switch* announced_;
  std::uint64_t switches_seen_;
  std::size_t sentinel_ = 0;  // the sentinel asked now (index)
  std::size_t asked_ = 0;     // sentinels asked in this round
  bool unknown_ = false;      // one of them answered that it does not know the name
  std::error_code last_error_;
  bool waiting_ = false;  // a round is open: its sink waits for answer or fail
  bool asking_ = false;   // a question is out
  bool stopped_ = false;
  std::vector<server_address> replicas_;
};

}  // namespace deadbolt::detail

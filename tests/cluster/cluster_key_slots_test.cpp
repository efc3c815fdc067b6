// Every kind's scripts on a real cluster with names whose braces are tricky: a script whose keys
// fell in two slots would get CROSSSLOT (or touch a key of another node), so a full round of each kind
// passing here shows they share one. Names whose braces do not form a hash tag are refused up front
// with errc::cross_slot, and nothing is written.
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <system_error>

#include "deadbolt/deadbolt.hpp"
#include "support/lock_test.hpp"
#include "support/redis_cluster.hpp"

using namespace std::chrono_literals;

namespace cluster_key_slots_test {

// One full round of every kind on names derived from `name` (kept in its hash tag, if it has one).
void every_kind(deadbolt::blocking_client& bc, const std::string& name) {
  std::error_code ec;
  auto lock = bc.lock(name + "-lock");
  REQUIRE(lock.try_lock_for(1s, 10s, ec));
  REQUIRE_FALSE(ec);
  CHECK(lock.hold_count(ec) == 1);
  lock.unlock(ec);
  CHECK_FALSE(ec);
  REQUIRE(lock.try_lock_for(1s, 10s, ec));
  CHECK(lock.force_unlock(ec));
  CHECK_FALSE(ec);

  auto fenced = bc.fenced_lock(name + "-fenced");
  CHECK(fenced.lock() > 0);
  fenced.unlock();

  auto fair = bc.fair_lock(name + "-fair");
  REQUIRE(fair.try_lock_for(1s, 10s, ec));
  CHECK_FALSE(ec);
  fair.unlock(ec);
  CHECK_FALSE(ec);

  auto rw = bc.read_write_lock(name + "-rw");
  rw.lock_shared();
  CHECK(bc.inspect(name + "-rw", ec).holders.size() == 1);
  CHECK_FALSE(ec);
  rw.unlock_shared();
  rw.lock();
  rw.unlock();

  auto sem = bc.semaphore(name + "-sem");
  REQUIRE(sem.try_set_permits(2, ec));
  CHECK(sem.try_acquire(2));
  sem.release(2);
  CHECK(sem.available_permits(ec) == 2);
  CHECK_FALSE(ec);

  auto exp = bc.expirable_semaphore(name + "-exp");
  REQUIRE(exp.try_set_permits(1, ec));
  const deadbolt::permit_id id = exp.acquire(10s, ec);
  REQUIRE_FALSE(ec);
  CHECK(exp.update_lease(id, 20s, ec));
  exp.release(id, ec);
  CHECK_FALSE(ec);

  auto latch = bc.count_down_latch(name + "-latch");
  if (name.find('{') == std::string::npos) {
    REQUIRE(latch.try_set_count(1, ec));
    CHECK(latch.count_down(ec) == 0);
    CHECK_FALSE(ec);
  } else {
    // Redisson's latch channel wraps the whole name in braces ("..._channel__{{tag}-latch}"), so for a
    // braced name its hash tag is not the name's: the server refuses the script, and says why.
    CHECK_FALSE(latch.try_set_count(1, ec));
    CHECK(ec == deadbolt::errc::cross_slot);
  }
}

}  // namespace cluster_key_slots_test

using namespace cluster_key_slots_test;

TEST_CASE("every kind runs on a cluster with names whose braces form a hash tag") {
  deadbolt::test::redis_cluster cluster;
  deadbolt::blocking_client bc(deadbolt::test::cluster_config(cluster));
  const std::string base = deadbolt::test::unique_name("slots");
  for (const std::string& name : {base, "{" + base + "}", "a{" + base + "}c", "}{" + base + "}",
                                  "\xC3\xBCn\xC3\xAF{" + base + "\xC3\xA9}", "x{" + base + "}}"}) {
    INFO("name '" << name << "'");
    every_kind(bc, name);
  }
}

TEST_CASE("a name whose braces are no hash tag is refused on a cluster with cross_slot, before anything runs") {
  deadbolt::test::redis_cluster cluster;
  deadbolt::blocking_client bc(deadbolt::test::cluster_config(cluster));
  const std::string base = deadbolt::test::unique_name("noslot");
  for (const std::string& name : {base + "}b", "{}" + base, base + "{"}) {
    INFO("name '" << name << "'");
    std::error_code ec;
    auto lock = bc.lock(name);
    CHECK_FALSE(lock.try_lock_for(1s, 10s, ec));
    CHECK(ec == deadbolt::errc::cross_slot);
    auto sem = bc.semaphore(name);
    CHECK_FALSE(sem.try_set_permits(1, ec));
    CHECK(ec == deadbolt::errc::cross_slot);
    bc.inspect(name, ec);
    CHECK(ec == deadbolt::errc::cross_slot);
    for (const auto& node : cluster.masters()) {
      // EXISTS on a node that does not own the slot answers MOVED, never 1.
      CHECK(node.cli("exists '" + name + "'") != "1");
    }
  }
}

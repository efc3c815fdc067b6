// The held-lock table: fixed capacity, open addressing with linear probing and backward-shift
// deletion. Small tables force long probe chains, so deletions that break a chain would show up as
// entries that can no longer be found.
#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <ostream>  // doctest prints std::error_code through operator<<
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "engine/holds.hpp"

using deadbolt::detail::hold;
using deadbolt::detail::hold_table;
using deadbolt::detail::lease_margin;

namespace {

constexpr std::uint32_t none = hold_table::none;

// Every entry of the model is findable at the index the model recorded, and nothing else is.
void check_against(const hold_table& table, const std::map<std::pair<std::string, std::int64_t>, std::uint32_t>& model,
                   const std::vector<std::string>& names, std::int64_t owners) {
  REQUIRE(table.size() == model.size());
  for (const auto& entry : model) {
    const auto& key = entry.first;  // not a structured binding: INFO captures it in a lambda
    const std::uint32_t index = entry.second;
    INFO("name " << key.first << " owner " << key.second);
    REQUIRE(table.find(key.first, key.second) == index);
    CHECK(table[index].in_use);
    CHECK(table[index].name == key.first);
    CHECK(table[index].owner == key.second);
  }
  for (const std::string& name : names) {
    for (std::int64_t owner = 0; owner < owners; ++owner) {
      if (model.count({name, owner}) == 0) {
        INFO("name " << name << " owner " << owner);
        REQUIRE(table.find(name, owner) == none);
      }
    }
  }
}

}  // namespace

TEST_CASE("insert, find and release") {
  hold_table t(4);
  CHECK(t.capacity() == 4);
  CHECK(t.size() == 0);
  CHECK(t.find("a", 1) == none);

  const std::uint32_t a1 = t.find_or_insert("a", 1);
  REQUIRE(a1 != none);
  CHECK(t.size() == 1);
  CHECK(t[a1].in_use);
  CHECK(t[a1].name == "a");
  CHECK(t[a1].owner == 1);
  CHECK(t[a1].count == 0);
  CHECK_FALSE(t[a1].watchdog);
  CHECK_FALSE(t[a1].lost);
  CHECK(t.find("a", 1) == a1);
  CHECK(t.find("a", 2) == none);  // same name, other owner
  CHECK(t.find("b", 1) == none);  // same owner, other name

  // Finding an existing entry does not insert.
  t[a1].count = 3;
  CHECK(t.find_or_insert("a", 1) == a1);
  CHECK(t.size() == 1);
  CHECK(t[a1].count == 3);

  const std::uint32_t a2 = t.find_or_insert("a", 2);
  const std::uint32_t b1 = t.find_or_insert("b", 1);
  REQUIRE(a2 != none);
  REQUIRE(b1 != none);
  CHECK(a2 != a1);
  CHECK(b1 != a1);
  CHECK(b1 != a2);
  CHECK(t.size() == 3);

  t.release(a1);
  CHECK(t.size() == 2);
  CHECK_FALSE(t[a1].in_use);
  CHECK(t.find("a", 1) == none);
  CHECK(t.find("a", 2) == a2);
  CHECK(t.find("b", 1) == b1);

  // Releasing twice is harmless.
  const std::uint32_t generation = t[a1].generation;
  t.release(a1);
  CHECK(t.size() == 2);
  CHECK(t[a1].generation == generation);
}

TEST_CASE("a reused slot starts from a clean state") {
  hold_table t(1);
  const std::uint32_t i = t.find_or_insert("lock", 7);
  REQUIRE(i != none);
  t[i].count = 5;
  t[i].lease_ms = 1234;
  t[i].watchdog = true;
  t[i].lost = true;
  t[i].confirmed_ns = 99;
  t.release(i);
  const std::uint32_t j = t.find_or_insert("other", 8);
  REQUIRE(j == i);
  CHECK(t[j].name == "other");
  CHECK(t[j].owner == 8);
  CHECK(t[j].count == 0);
  CHECK(t[j].lease_ms == 0);
  CHECK_FALSE(t[j].watchdog);
  CHECK_FALSE(t[j].lost);
  CHECK(t[j].confirmed_ns == 0);
  CHECK(t[j].in_use);
}

TEST_CASE("a full table returns none and recovers after a release") {
  hold_table t(3);
  const std::uint32_t a = t.find_or_insert("a", 1);
  const std::uint32_t b = t.find_or_insert("b", 1);
  const std::uint32_t c = t.find_or_insert("c", 1);
  REQUIRE(a != none);
  REQUIRE(b != none);
  REQUIRE(c != none);
  CHECK(t.size() == 3);
  CHECK(t.find_or_insert("d", 1) == none);
  CHECK(t.find_or_insert("a", 2) == none);
  CHECK(t.size() == 3);
  CHECK(t.find("d", 1) == none);
  // Existing entries are still found (and "inserted") while full.
  CHECK(t.find_or_insert("b", 1) == b);

  t.release(b);
  const std::uint32_t d = t.find_or_insert("d", 1);
  CHECK(d == b);  // the freed slot
  CHECK(t.find("a", 1) == a);
  CHECK(t.find("c", 1) == c);
  CHECK(t.find("d", 1) == d);
  CHECK(t.find("b", 1) == none);
  CHECK(t.find_or_insert("e", 1) == none);
}

TEST_CASE("the generation bumps on every release, so stale replies can tell") {
  hold_table t(2);
  const std::uint32_t i = t.find_or_insert("x", 1);
  REQUIRE(i != none);
  const std::uint32_t g0 = t[i].generation;
  t.release(i);
  CHECK(t[i].generation == g0 + 1);
  const std::uint32_t again = t.find_or_insert("x", 1);
  REQUIRE(again == i);
  CHECK(t[i].generation == g0 + 1);  // insertion does not bump it
  t.release(i);
  CHECK(t[i].generation == g0 + 2);
}

TEST_CASE("capacity 1 and a table filled completely") {
  hold_table one(1);
  const std::uint32_t i = one.find_or_insert("only", 0);
  REQUIRE(i == 0);
  CHECK(one.find_or_insert("second", 0) == none);
  one.release(i);
  CHECK(one.find_or_insert("second", 0) == 0);

  // Same name for every owner and same owner for every name: everything fits, everything is found.
  hold_table t(64);
  std::vector<std::uint32_t> index;
  for (std::int64_t owner = 0; owner < 32; ++owner) index.push_back(t.find_or_insert("shared", owner));
  for (int n = 0; n < 32; ++n) index.push_back(t.find_or_insert("lock" + std::to_string(n), 1));
  CHECK(t.size() == 64);
  CHECK(t.find_or_insert("overflow", 1) == none);
  for (std::int64_t owner = 0; owner < 32; ++owner) CHECK(t.find("shared", owner) == index[owner]);
  for (int n = 0; n < 32; ++n) CHECK(t.find("lock" + std::to_string(n), 1) == index[32 + n]);
  // Release every other entry, then the rest must still be there.
  for (std::size_t k = 0; k < index.size(); k += 2) t.release(index[k]);
  CHECK(t.size() == 32);
  for (std::int64_t owner = 1; owner < 32; owner += 2) CHECK(t.find("shared", owner) == index[owner]);
  for (int n = 1; n < 32; n += 2) CHECK(t.find("lock" + std::to_string(n), 1) == index[32 + n]);
  for (std::int64_t owner = 0; owner < 32; owner += 2) CHECK(t.find("shared", owner) == none);
}

TEST_CASE("random inserts and releases agree with a std::map model (backward-shift deletion)") {
  // Owners include negative and huge values: the owner is mixed into the hash as an unsigned product.
  const std::int64_t owner_values[] = {0, 1, 2, 3, -1, -2, INT64_MIN, INT64_MAX, 1LL << 40, 42};
  constexpr std::int64_t owners = sizeof owner_values / sizeof owner_values[0];

  for (const std::size_t capacity : {std::size_t{1}, std::size_t{5}, std::size_t{8}, std::size_t{13},
                                     std::size_t{64}}) {
    INFO("capacity " << capacity);
    std::mt19937_64 rng(0xdeadb017 + capacity);
    std::vector<std::string> names;
    for (int n = 0; n < 12; ++n) names.push_back("lock:" + std::to_string(n));
    names.push_back("{user1}:lock");
    names.push_back("");

    hold_table t(capacity);
    std::map<std::pair<std::string, std::int64_t>, std::uint32_t> model;
    for (int op = 0; op < 4000; ++op) {
      const std::string& name = names[rng() % names.size()];
      const std::int64_t owner = owner_values[rng() % owners];
      const auto key = std::make_pair(name, owner);
      const bool insert = rng() % 100 < 55;
      if (insert) {
        const std::uint32_t i = t.find_or_insert(name, owner);
        if (auto it = model.find(key); it != model.end()) {
          REQUIRE(i == it->second);
        } else if (model.size() == capacity) {
          REQUIRE(i == none);
        } else {
          REQUIRE(i != none);
          REQUIRE(i < capacity);
          for (const auto& [other, index] : model) REQUIRE(index != i);
          model.emplace(key, i);
        }
      } else if (auto it = model.find(key); it != model.end()) {
        const std::uint32_t i = it->second;
        const std::uint32_t before = t[i].generation;
        t.release(i);
        CHECK(t[i].generation == before + 1);
        model.erase(it);
      } else {
        REQUIRE(t.find(name, owner) == none);
      }
      // Full check every few operations (and after every op in the smallest tables).
      if (capacity <= 8 || op % 16 == 0) {
        REQUIRE(t.size() == model.size());
        for (const auto& [k, index] : model) REQUIRE(t.find(k.first, k.second) == index);
      }
      if (op % 500 == 0) {
        for (const std::string& n : names) {
          for (std::int64_t o : owner_values) {
            if (model.count({n, o}) == 0) REQUIRE(t.find(n, o) == none);
          }
        }
      }
    }
    // Drain in random order: every remaining entry stays findable after each deletion.
    while (!model.empty()) {
      auto it = model.begin();
      std::advance(it, static_cast<long>(rng() % model.size()));
      t.release(it->second);
      model.erase(it);
      for (const auto& [k, index] : model) REQUIRE(t.find(k.first, k.second) == index);
    }
    CHECK(t.size() == 0);
    for (const std::string& name : names) {
      for (std::int64_t owner : owner_values) CHECK(t.find(name, owner) == none);
    }
  }
}

TEST_CASE("many insert/release cycles on a nearly full small table") {
  // 16 buckets for 8 entries: probe chains wrap around the end of the bucket array.
  hold_table t(8);
  std::mt19937_64 rng(7);
  std::map<std::pair<std::string, std::int64_t>, std::uint32_t> model;
  std::vector<std::string> names;
  for (int n = 0; n < 40; ++n) names.push_back("k" + std::to_string(n));
  for (int cycle = 0; cycle < 3000; ++cycle) {
    // Fill up.
    while (model.size() < 8) {
      const std::string& name = names[rng() % names.size()];
      const std::int64_t owner = static_cast<std::int64_t>(rng() % 3);
      const std::uint32_t i = t.find_or_insert(name, owner);
      REQUIRE(i != none);
      auto [it, fresh] = model.emplace(std::make_pair(name, owner), i);
      REQUIRE(it->second == i);
      (void)fresh;
    }
    REQUIRE(t.find_or_insert("never", 99) == none);
    // Release a random number of random entries.
    const std::size_t drop = 1 + rng() % 8;
    for (std::size_t d = 0; d < drop && !model.empty(); ++d) {
      auto it = model.begin();
      std::advance(it, static_cast<long>(rng() % model.size()));
      t.release(it->second);
      model.erase(it);
    }
    if (cycle % 100 == 0) {
      check_against(t, model, names, 3);
    } else {
      for (const auto& [k, index] : model) REQUIRE(t.find(k.first, k.second) == index);
    }
  }
  check_against(t, model, names, 3);
}

// The client's deadline of a hold (valid_until): the confirming request's send time + the lease - the
// margin, for the watchdog's holds and fixed leases alike; how long is left (valid_for_ms).
TEST_CASE("a hold's deadline on the client is its last confirmed send time + its lease - the margin") {
  constexpr std::int64_t ms = 1'000'000;
  const lease_margin margin{2 * ms, 0.01};  // the default: 1% + 2 ms
  CHECK(margin.of(30'000) == 302 * ms);
  CHECK(margin.of(0) == 2 * ms);
  CHECK(lease_margin{}.of(30'000) == 0);

  hold h;
  h.in_use = true;
  h.count = 1;
  h.lease_ms = 1000;
  h.confirmed_ns = 5'000 * ms;
  CHECK(valid_until(h, margin) == (5'000 + 1'000 - 12) * ms);
  CHECK(watched(h));
  CHECK(valid_for_ms(h, margin, 5'000 * ms) == 988);
  CHECK(valid_for_ms(h, margin, 5'500 * ms + 1) == 487);  // rounded down: never more than is left
  CHECK(valid_for_ms(h, margin, 5'988 * ms - 1) == 0);
  CHECK(valid_for_ms(h, margin, 5'988 * ms) == 0);
  CHECK(valid_for_ms(h, margin, 9'000 * ms) == 0);

  SUBCASE("a renewal moves it") {
    h.confirmed_ns = 5'400 * ms;
    CHECK(valid_until(h, margin) == (5'400 + 988) * ms);
  }
  SUBCASE("nothing is left of a lost hold") {
    h.lost = true;
    CHECK_FALSE(watched(h));
    CHECK(valid_for_ms(h, margin, 5'000 * ms) == 0);
  }
  SUBCASE("an acquire whose outcome is unknown is not the caller's hold") {
    h.count = 0;
    h.uncertain = true;
    CHECK_FALSE(watched(h));
    CHECK(valid_for_ms(h, margin, 5'000 * ms) == 0);
  }
  SUBCASE("a lease not longer than its margin is over at once") {
    h.lease_ms = 2;
    CHECK(valid_until(h, margin) <= h.confirmed_ns);
    CHECK(valid_for_ms(h, margin, h.confirmed_ns) == 0);
  }
}

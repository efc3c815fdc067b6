// The live line shown on a terminal while `run` waits: how long we waited, the lock's TTL and who
// holds it, cut to the terminal's width so that it never wraps (a wrapped line is not erased by \r).
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace deadbolt::cli {

/// The width of the terminal on stderr (TIOCGWINSZ), else $COLUMNS, else 80.
std::size_t terminal_width();

/// `text` shortened to at most `columns` characters (UTF-8 aware, "..." marks a cut), with control
/// characters shown as '?'.
std::string fit(const std::string& text, std::size_t columns);

class status_line {
 public:
  /// `holder`: who holds it in words (may be empty); `ttl_ms` < 0 when it has none.
  void show(const std::string& name, const std::string& holder, long long ttl_ms, std::chrono::steady_clock::duration waited);
  void clear();

 private:
  bool shown_ = false;
};

}  // namespace deadbolt::cli

#include "verbose_log.hpp"

#include <sys/time.h>

#include <cstdarg>
#include <cstdio>
#include <ctime>

namespace deadbolt::cli {
namespace {
bool enabled = false;
}

void enable_verbose() { enabled = true; }
bool verbose_enabled() { return enabled; }

void verbose(const char* format, ...) {
  if (!enabled) return;
  timeval now{};
  ::gettimeofday(&now, nullptr);
  std::tm utc{};
  ::gmtime_r(&now.tv_sec, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &utc);
  char line[1024];
  va_list args;
  va_start(args, format);
  std::vsnprintf(line, sizeof line, format, args);
  va_end(args);
  // One write per line, so lines from deadbolt and COMMAND sharing stderr do not interleave mid-line.
  char whole[1100];
  const int n = std::snprintf(whole, sizeof whole, "%s.%03dZ deadbolt: %s\n", stamp, static_cast<int>(now.tv_usec / 1000), line);
  if (n > 0) std::fwrite(whole, 1, n < static_cast<int>(sizeof whole) ? static_cast<std::size_t>(n) : sizeof whole - 1, stderr);
}

}  // namespace deadbolt::cli

// --verbose: timestamped progress lines on stderr ("2026-01-02T03:04:05.678Z deadbolt: connected").
#pragma once

namespace deadbolt::cli {

/// Turns the lines on (off by default).
void enable_verbose();
bool verbose_enabled();

/// printf-style; one line, newline added. Nothing unless enabled.
void verbose(const char* format, ...) __attribute__((format(printf, 1, 2)));

}  // namespace deadbolt::cli

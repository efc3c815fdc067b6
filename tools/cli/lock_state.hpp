// What `status` shows for a name: what the library's inspect() read (deadbolt/inspect.hpp), and the
// holder info that deadbolt run left beside each hold (holder_info.hpp), which is the CLI's own data.
#pragma once

#include <map>
#include <string>

#include "deadbolt/inspect.hpp"
#include "holder_info.hpp"

namespace deadbolt::cli {

struct lock_state {
  deadbolt::object_info object;
  /// By owner field ("<uuid>:<owner>[:write]") or permit id (hex): the holds that left their info.
  std::map<std::string, holder_info> infos;
};

class json;

void print_text(const std::string& name, const lock_state& s);
void print_json(const std::string& name, const lock_state& s);
/// The object print_json prints, into `out` (list's array holds them).
void write_json(json& out, const std::string& name, const lock_state& s);
/// One line: name, kind, state, TTL, first holder (list's table).
void print_line(const std::string& name, const lock_state& s);

}  // namespace deadbolt::cli

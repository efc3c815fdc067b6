// Well-formed replies of every RESP2/RESP3 type with the nodes they decode to: shared by the
// whole-input and the split-at-every-byte tests.
#pragma once

#include <string>
#include <vector>

#include "collect.hpp"

namespace deadbolt::resp::test {

struct reply_case {
  const char* name;
  std::string wire;
  std::vector<owned_node> nodes;
};

inline std::vector<reply_case> reply_cases() {
  using t = resp::type;
  return {
      {"simple string", "+OK\r\n", {{t::simple_string, 0, 1, "OK", true}}},
      {"empty simple string", "+\r\n", {{t::simple_string, 0, 1, "", true}}},
      {"simple error", "-ERR wrong\r\n", {{t::simple_error, 0, 1, "ERR wrong", true}}},
      {"integer", ":1234\r\n", {{t::integer, 0, 1, "1234", true}}},
      {"negative integer", ":-9223372036854775808\r\n", {{t::integer, 0, 1, "-9223372036854775808", true}}},
      {"max integer", ":9223372036854775807\r\n", {{t::integer, 0, 1, "9223372036854775807", true}}},
      {"bulk string", "$5\r\nhello\r\n", {{t::blob_string, 0, 1, "hello", true}}},
      {"bulk with CRLF inside", "$4\r\na\r\nb\r\n", {{t::blob_string, 0, 1, "a\r\nb", true}}},
      {"empty bulk", "$0\r\n\r\n", {{t::blob_string, 0, 1, "", true}}},
      {"null bulk (RESP2)", "$-1\r\n", {{t::null, 0, 1, "", true}}},
      {"null array (RESP2)", "*-1\r\n", {{t::null, 0, 1, "", true}}},
      {"null (RESP3)", "_\r\n", {{t::null, 0, 1, "", true}}},
      {"boolean true", "#t\r\n", {{t::boolean, 0, 1, "t", true}}},
      {"boolean false", "#f\r\n", {{t::boolean, 0, 1, "f", true}}},
      {"double", ",3.14\r\n", {{t::double_type, 0, 1, "3.14", true}}},
      {"double exponent", ",-1.5e-10\r\n", {{t::double_type, 0, 1, "-1.5e-10", true}}},
      {"double inf", ",-inf\r\n", {{t::double_type, 0, 1, "-inf", true}}},
      {"double nan", ",nan\r\n", {{t::double_type, 0, 1, "nan", true}}},
      {"big number", "(3492890328409238509324850943850943825024385\r\n",
       {{t::big_number, 0, 1, "3492890328409238509324850943850943825024385", true}}},
      {"blob error", "!21\r\nSYNTAX invalid syntax\r\n", {{t::blob_error, 0, 1, "SYNTAX invalid syntax", true}}},
      {"verbatim", "=15\r\ntxt:Some string\r\n", {{t::verbatim_string, 0, 1, "Some string", true}}},
      {"empty array", "*0\r\n", {{t::array, 0, 0, "", true}}},
      {"array",
       "*3\r\n:1\r\n$3\r\nfoo\r\n_\r\n",
       {{t::array, 0, 3, "", false},
        {t::integer, 1, 1, "1", false},
        {t::blob_string, 1, 1, "foo", false},
        {t::null, 1, 1, "", true}}},
      {"nested arrays",
       "*2\r\n*2\r\n:1\r\n:2\r\n*0\r\n",
       {{t::array, 0, 2, "", false},
        {t::array, 1, 2, "", false},
        {t::integer, 2, 1, "1", false},
        {t::integer, 2, 1, "2", false},
        {t::array, 1, 0, "", true}}},
      {"map",
       "%2\r\n+mode\r\n+write\r\n$3\r\nU:1\r\n:2\r\n",
       {{t::map, 0, 2, "", false},
        {t::simple_string, 1, 1, "mode", false},
        {t::simple_string, 1, 1, "write", false},
        {t::blob_string, 1, 1, "U:1", false},
        {t::integer, 1, 1, "2", true}}},
      {"set", "~2\r\n#t\r\n#f\r\n",
       {{t::set, 0, 2, "", false}, {t::boolean, 1, 1, "t", false}, {t::boolean, 1, 1, "f", true}}},
      {"push (pub/sub message)",
       ">3\r\n$7\r\nmessage\r\n$24\r\nredisson_lock__channel:x\r\n$1\r\n0\r\n",
       {{t::push, 0, 3, "", false},
        {t::blob_string, 1, 1, "message", false},
        {t::blob_string, 1, 1, "redisson_lock__channel:x", false},
        {t::blob_string, 1, 1, "0", true}}},
      {"attribute before a top-level value",
       "|1\r\n+key-popularity\r\n:7\r\n:42\r\n",
       {{t::attribute, 0, 1, "", false},
        {t::simple_string, 1, 1, "key-popularity", false},
        {t::integer, 1, 1, "7", false},
        {t::integer, 0, 1, "42", true}}},
      {"attribute inside an array",
       "*2\r\n|1\r\n+a\r\n+b\r\n:1\r\n:2\r\n",
       {{t::array, 0, 2, "", false},
        {t::attribute, 1, 1, "", false},
        {t::simple_string, 2, 1, "a", false},
        {t::simple_string, 2, 1, "b", false},
        {t::integer, 1, 1, "1", false},
        {t::integer, 1, 1, "2", true}}},
      {"empty attribute", "|0\r\n:5\r\n", {{t::attribute, 0, 0, "", false}, {t::integer, 0, 1, "5", true}}},
  };
}

}  // namespace deadbolt::resp::test

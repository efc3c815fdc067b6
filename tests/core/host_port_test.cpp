// "host:port" in its two grammars (src/base/host_port.hpp): a URL's and a cluster reply's. The URL
// messages built on it are url_test's; the redirections, cluster_layout_test's.
#include <doctest/doctest.h>

#include <string>
#include <string_view>

#include "base/host_port.hpp"

// Its own namespace: the core tests are built as one unit (unity build).
namespace host_port_suite {

using deadbolt::detail::host_port_grammar;
using deadbolt::detail::host_port_problem;
using deadbolt::detail::split_host_port;

// "host port" when it parses, else the problem's name and its piece.
std::string read(std::string_view text, host_port_grammar g) {
  const auto hp = split_host_port(text, g);
  switch (hp.problem) {
    case host_port_problem::none: return std::string(hp.host) + " " + std::to_string(hp.port);
    case host_port_problem::unclosed_bracket: return "unclosed_bracket";
    case host_port_problem::after_bracket: return "after_bracket " + std::string(hp.piece);
    case host_port_problem::bare_ipv6: return "bare_ipv6";
    case host_port_problem::no_host: return "no_host";
    case host_port_problem::bad_host: return "bad_host " + std::string(hp.piece);
    case host_port_problem::bad_port: return "bad_port '" + std::string(hp.piece) + "'";
    case host_port_problem::no_port: return "no_port";
  }
  return "?";
}

std::string url(std::string_view text) { return read(text, host_port_grammar::url); }
std::string reply(std::string_view text) { return read(text, host_port_grammar::cluster_reply); }

TEST_CASE("host:port, URL grammar: the host is required, IPv6 in brackets, the port optional") {
  CHECK(url("localhost") == "localhost 0");
  CHECK(url("127.0.0.1:6380") == "127.0.0.1 6380");
  CHECK(url("[::1]:6379") == "::1 6379");
  CHECK(url("[::1]") == "::1 0");
  CHECK(url("h:65535") == "h 65535");
  CHECK(url("::1:6379") == "bare_ipv6");
  CHECK(url("h:1:2") == "bare_ipv6");
  CHECK(url("[::1") == "unclosed_bracket");
  CHECK(url("[::1]6379") == "after_bracket 6379");
  CHECK(url(":6379") == "no_host");
  CHECK(url("") == "no_host");
  CHECK(url("[]:6379") == "no_host");
  CHECK(url("a b:1") == "bad_host a b");
  CHECK(url("u@h:1") == "bad_host u@h");
  CHECK(url("h:") == "bad_port ''");
  CHECK(url("h:0") == "bad_port '0'");
  CHECK(url("h:65536") == "bad_port '65536'");
  CHECK(url("h:12x") == "bad_port '12x'");
  CHECK(url("h:-1") == "bad_port '-1'");
  CHECK(url("[::1]:") == "bad_port ''");
}

TEST_CASE("host:port, cluster reply grammar: the port after the last ':', IPv6 bare or bracketed, host may be empty") {
  CHECK(reply("127.0.0.1:7000") == "127.0.0.1 7000");
  CHECK(reply("::1:7000") == "::1 7000");
  CHECK(reply("[::1]:7000") == "::1 7000");
  CHECK(reply(":7000") == " 7000");
  CHECK(reply("node-3.example:7001") == "node-3.example 7001");
  CHECK(reply("127.0.0.1") == "no_port");
  CHECK(reply("") == "no_port");
  CHECK(reply("h:0") == "bad_port '0'");
  CHECK(reply("h:70000") == "bad_port '70000'");
  CHECK(reply("h:") == "bad_port ''");
  CHECK(reply("::1") == ": 1");  // the last group is the port: Redis always writes one
}

}  // namespace host_port_suite

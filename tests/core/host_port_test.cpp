// "host:port" in its two grammars (src/base/host_port.hpp): a URL's and a cluster reply's, and that a
// URL's acceptance (parse_url) and its message (why_invalid_url) come from the same parse. The
// redirections built on the cluster grammar are cluster_layout_test's.
#include <doctest/doctest.h>

#include <string>
#include <string_view>

#include "base/host_port.hpp"
#include "deadbolt/config.hpp"
#include "deadbolt/error.hpp"
#include "deadbolt/url.hpp"

// Its own namespace: the core tests are built as one unit (unity build).
namespace host_port_suite {

using deadbolt::detail::host_port_grammar;
using deadbolt::detail::host_port_problem;
using deadbolt::detail::split_host_port;

// "host port" when it parses, else the problem's name and its piece.
template <host_port_grammar G>
std::string read(std::string_view text) {
  const auto hp = split_host_port<G>(text);
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

std::string url(std::string_view text) { return read<host_port_grammar::url>(text); }
std::string reply(std::string_view text) { return read<host_port_grammar::cluster_reply>(text); }

TEST_CASE("host:port, URL grammar: the host is required, IPv6 in brackets, the port optional") {
  CHECK(url("localhost") == "localhost 0");
  CHECK(url("127.0.0.1:6380") == "127.0.0.1 6380");
  CHECK(url("[::1]:6379") == "::1 6379");
  CHECK(url("[::1]") == "::1 0");
  CHECK(url("h:65535") == "h 65535");
  CHECK(url("h:06379") == "h 6379");
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
  CHECK(url("h:99999999999") == "bad_port '99999999999'");
  CHECK(url("h:12x") == "bad_port '12x'");
  CHECK(url("h:-1") == "bad_port '-1'");
  CHECK(url("h:+1") == "bad_port '+1'");
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
  CHECK(reply("[::1]") == "no_port");
  CHECK(reply("h:0") == "bad_port '0'");
  CHECK(reply("h:70000") == "bad_port '70000'");
  CHECK(reply("h:") == "bad_port ''");
  CHECK(reply("::1") == ": 1");  // the last group is the port: Redis always writes one
}

// The IPv6 rules side by side: where the two grammars must agree (brackets) and the one place they
// differ by design (a bare address). A change to either grammar's IPv6 handling alone fails here.
TEST_CASE("host:port, IPv6 in both grammars: brackets read alike, a bare address only in a cluster reply") {
  struct both {
    const char* text;
    const char* as_url;
    const char* as_reply;
  };
  const both cases[] = {
      {"[::1]:7000", "::1 7000", "::1 7000"},
      {"[fe80::1:2]:7000", "fe80::1:2 7000", "fe80::1:2 7000"},
      {"[::ffff:127.0.0.1]:7000", "::ffff:127.0.0.1 7000", "::ffff:127.0.0.1 7000"},
      {"[::1", "unclosed_bracket", "unclosed_bracket"},
      {"[::1:7000", "unclosed_bracket", "unclosed_bracket"},
      {"[::1]x:7000", "after_bracket x:7000", "after_bracket x:7000"},
      {"[::1]:0", "bad_port '0'", "bad_port '0'"},
      {"[::1]:x", "bad_port 'x'", "bad_port 'x'"},
      {"::1:7000", "bare_ipv6", "::1 7000"},                  // a URL cannot tell host from port
      {"fe80::1:2:7000", "bare_ipv6", "fe80::1:2 7000"},
  };
  for (const both& c : cases) {
    INFO("text: \"" << c.text << "\"");
    CHECK(url(c.text) == c.as_url);
    CHECK(reply(c.text) == c.as_reply);
  }
}

// config's parse_url refuses a URL exactly when url_text's why_invalid_url names a host:port problem
// for it, with the words of that problem: both read the authority with split_host_port<url>.
TEST_CASE("host:port in a URL: what parse_url refuses, why_invalid_url words from the same parse") {
  struct refused {
    const char* hp;
    const char* says;
  };
  const refused cases[] = {
      {"[::1", "the IPv6 address has no closing ']'"},
      {"[::1]x", "unexpected 'x' after the IPv6 address"},
      {"::1:6379", "an IPv6 address needs brackets: redis://[::1]:6379"},
      {":6379", "no host (redis://HOST[:PORT][/DB])"},
      {"[]:6379", "no host (redis://HOST[:PORT][/DB])"},
      {"ho[st", "the host 'ho[st' has a character hosts cannot have"},
      {"h:65536", "the port '65536' is not a number from 1 to 65535"},
      {"[::1]:", "the port '' is not a number from 1 to 65535"},
  };
  for (const refused& c : cases) {
    const std::string text = std::string("redis://") + c.hp;
    INFO("url: \"" << text << "\"");
    CHECK(split_host_port<host_port_grammar::url>(c.hp).problem != host_port_problem::none);
    deadbolt::endpoint ep;
    CHECK(deadbolt::parse_url(text, ep) == deadbolt::errc::invalid_url);
    CHECK(deadbolt::why_invalid_url(text) == c.says);
  }
  deadbolt::endpoint ep;
  CHECK_FALSE(deadbolt::parse_url("redis://[::1]:6380", ep));
  CHECK(ep.host == "::1");
  CHECK(ep.port == 6380);
}

}  // namespace host_port_suite

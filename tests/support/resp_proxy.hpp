// A RESP-aware forwarder between clients and a redis-server on loopback, on its own thread: it reads
// whole commands and whole replies (deadbolt's own RESP decoder), so a test can make the server look
// like an endpoint no server configuration gives (a managed service or a proxy): commands rewritten
// before the server sees them, pushes renamed on the way back, a command that is never answered.
// tcp_proxy.hpp forwards bytes; this one forwards messages.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "support/loopback_socket.hpp"

#include "deadbolt/resp/decoder.hpp"

namespace deadbolt::test {

class resp_proxy {
 public:
  /// What becomes of one command a client sent.
  enum class verdict {
    forward,  ///< sent on to the server as the rule left its words (changed or not)
    silence,  ///< the link goes silent from this command on, both ways: a server that never answers
  };
  /// Sees each command a client sends (its words, the name as sent) and may change the words.
  using command_rule = std::function<verdict(std::vector<std::string>& words)>;
  /// Sees the first word of each top-level aggregate reply or push (e.g. "smessage") and may change it.
  using reply_rule = std::function<void(std::string& first_word)>;

  resp_proxy(std::uint16_t target, command_rule on_command, reply_rule on_reply = {})
      : target_(target), on_command_(std::move(on_command)), on_reply_(std::move(on_reply)) {
    listener_ = listen_on_loopback(port_);
    thread_ = std::thread([this] { run(); });
  }
  ~resp_proxy() {
    stop_ = true;
    thread_.join();
    for (const auto& l : links_) {
      ::close(l->client);
      ::close(l->server);
    }
    ::close(listener_);
  }
  resp_proxy(const resp_proxy&) = delete;
  resp_proxy& operator=(const resp_proxy&) = delete;

  std::uint16_t port() const { return port_; }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }
  /// How many links went silent (verdict::silence) so far.
  int silenced() const { return silenced_; }

  /// The words of a command, as RESP (an array of bulk strings).
  static std::string encode(const std::vector<std::string>& words) {
    std::string out = "*" + std::to_string(words.size()) + "\r\n";
    for (const auto& w : words) out += "$" + std::to_string(w.size()) + "\r\n" + w + "\r\n";
    return out;
  }
  /// Case-insensitive comparison of a command word.
  static bool is(const std::string& word, std::string_view name) {
    if (word.size() != name.size()) return false;
    for (std::size_t i = 0; i < word.size(); ++i) {
      if (std::toupper(static_cast<unsigned char>(word[i])) != std::toupper(static_cast<unsigned char>(name[i]))) {
        return false;
      }
    }
    return true;
  }

 private:
  // One direction of a link: bytes read and not yet forwarded, decoded message by message.
  struct direction {
    std::string pending;
    resp::decoder decoder;
  };
  struct link {
    int client = -1;
    int server = -1;
    bool silent = false;
    direction up;    // client to server: commands
    direction down;  // server to client: replies and pushes
  };


  void run() {
    std::vector<pollfd> fds;
    while (!stop_) {
      fds.assign(1, pollfd{listener_, POLLIN, 0});
      for (const auto& l : links_) {
        fds.push_back({l->client, POLLIN, 0});
        fds.push_back({l->server, POLLIN, 0});
      }
      if (::poll(fds.data(), fds.size(), 10) <= 0) continue;
      if (fds[0].revents & POLLIN) accept_one();
      for (std::size_t i = 1; i < fds.size(); ++i) {
        if (fds[i].revents == 0) continue;
        link& l = *links_[(i - 1) / 2];
        const bool upstream = fds[i].fd == l.client;
        if (!pass(l, upstream)) {  // closed: close the other side too, and forget the link
          ::close(l.client);
          ::close(l.server);
          links_.erase(links_.begin() + static_cast<std::ptrdiff_t>((i - 1) / 2));
          break;  // indices moved: poll again
        }
      }
    }
  }

  void accept_one() {
    const int client = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) return;
    const int server = connect_to_loopback(target_);
    if (server < 0) {
      ::close(client);
      return;
    }
    auto l = std::make_unique<link>();
    l->client = client;
    l->server = server;
    links_.push_back(std::move(l));
  }

  // Reads what arrived on one side and forwards each whole message it completes, as the rules say.
  bool pass(link& l, bool upstream) {
    char buf[16384];
    const ssize_t n = ::read(upstream ? l.client : l.server, buf, sizeof buf);
    if (n <= 0) return false;
    if (l.silent) return true;
    direction& d = upstream ? l.up : l.down;
    d.pending.append(buf, static_cast<std::size_t>(n));
    std::string out;
    std::size_t start = 0, at = 0;
    std::vector<std::string> words;
    std::size_t header = 0, first_end = 0;  // a reply's aggregate header, and where its first word ends
    bool first_is_word = false;
    while (at < d.pending.size()) {
      const resp::parse_result r = d.decoder.next(std::string_view(d.pending).substr(at));
      if (r.what == resp::parse_result::kind::need_more) break;
      if (r.what == resp::parse_result::kind::error) return false;
      if (r.node.depth == 0) header = r.consumed;
      if (r.node.depth == 1) {
        if (words.empty()) {
          first_end = at + r.consumed;
          first_is_word = r.node.type == resp::type::blob_string || r.node.type == resp::type::simple_string;
        }
        words.emplace_back(r.node.value);
      }
      at += r.consumed;
      if (!r.end_of_reply) continue;
      const std::string_view whole(d.pending.data() + start, at - start);
      if (upstream) {
        if (!words.empty() && on_command_(words) == verdict::silence) {
          l.silent = true;
          ++silenced_;
          break;
        }
        out += words.empty() ? std::string(whole) : encode(words);
      } else if (on_reply_ && !words.empty() && first_is_word) {
        std::string first = words.front();
        on_reply_(first);
        out += std::string(whole.substr(0, header)) + "$" + std::to_string(first.size()) + "\r\n" + first + "\r\n" +
               std::string(d.pending.data() + first_end, at - first_end);
      } else {
        out += whole;
      }
      start = at;
      words.clear();
      first_is_word = false;
    }
    d.pending.erase(0, l.silent ? d.pending.size() : start);
    if (!l.silent) d.decoder.reset();  // each message was decoded whole; a partial one is read again
    const int to = upstream ? l.server : l.client;
    for (std::size_t done = 0; done < out.size();) {
      const ssize_t w = ::send(to, out.data() + done, out.size() - done, MSG_NOSIGNAL);
      if (w <= 0) return false;
      done += static_cast<std::size_t>(w);
    }
    return true;
  }

  std::uint16_t target_;
  command_rule on_command_;
  reply_rule on_reply_;
  std::uint16_t port_ = 0;
  int listener_ = -1;
  std::vector<std::unique_ptr<link>> links_;  // the proxy thread's own
  std::atomic<int> silenced_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace deadbolt::test

// A TCP forwarder between a client and a redis-server on loopback, on its own thread: a network
// partition for the clients behind it (freeze), or a connection cut right after a request went through
// (cut_after: the request runs, its reply is lost).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include "support/loopback_socket.hpp"

namespace deadbolt::test {

/// A TCP forwarder to the server on its own thread. freeze() stops it forwarding in either direction
/// (connections stay open, bytes stay where they are): a network partition for the clients behind it.
class tcp_proxy {
 public:
  explicit tcp_proxy(std::uint16_t target) : target_(target) {
    listener_ = listen_on_loopback(port_);
    thread_ = std::thread([this] { run(); });
  }
  ~tcp_proxy() {
    stop_ = true;
    thread_.join();
    for (const auto& l : links_) {
      ::close(l.first);
      ::close(l.second);
    }
    ::close(listener_);
  }
  tcp_proxy(const tcp_proxy&) = delete;
  tcp_proxy& operator=(const tcp_proxy&) = delete;

  std::uint16_t port() const { return port_; }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }
  void freeze() { frozen_ = true; }
  /// The next client-to-server chunk containing `marker` is forwarded, then that link is closed at
  /// both ends: the server runs the request, its reply never reaches the client. Several calls queue
  /// their markers: one cut each, in order.
  void cut_after(const std::string& marker) {
    std::lock_guard<std::mutex> g(mutex_);
    cut_markers_.push_back(marker);
  }
  /// A link whose client sends a chunk containing `marker` goes silent from then on: that chunk and
  /// everything after it, both ways, is read and thrown away (a server that never answers a command).
  void silence_after(const std::string& marker) {
    std::lock_guard<std::mutex> g(mutex_);
    silence_marker_ = marker;
  }
  /// While muted, the server's replies are read and thrown away: requests run, no answer arrives.
  void mute(bool on) { muted_ = on; }
  /// Closes every link at both ends (on the proxy's thread); new connections are forwarded.
  void drop_links() {
    drop_ = true;
    while (drop_) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  /// How many links were cut so far.
  int cuts() const { return cuts_; }
  /// How many client connections it has accepted so far (frozen or not).
  int accepted() const { return accepted_; }

 private:

  void run() {
    std::vector<pollfd> fds;
    while (!stop_) {
      if (drop_.exchange(false)) {
        for (const auto& l : links_) {
          forget_silent(l.first);
          ::close(l.first);
          ::close(l.second);
        }
        links_.clear();
      }
      fds.assign(1, pollfd{listener_, POLLIN, 0});
      if (!frozen_) {
        for (const auto& l : links_) {
          fds.push_back({l.first, POLLIN, 0});
          fds.push_back({l.second, POLLIN, 0});
        }
      }
      if (::poll(fds.data(), fds.size(), 10) <= 0) continue;
      if (fds[0].revents & POLLIN) accept_one();
      for (std::size_t i = 1; i < fds.size(); ++i) {
        if (fds[i].revents == 0) continue;
        const std::size_t link = (i - 1) / 2;
        const int from = fds[i].fd;
        const bool upstream = from == links_[link].first;
        const int to = upstream ? links_[link].second : links_[link].first;
        if (!forward(from, to, upstream)) {  // closed: close the other side too, and forget the link
          forget_silent(links_[link].first);  // its number may be reused
          ::close(links_[link].first);
          ::close(links_[link].second);
          links_.erase(links_.begin() + static_cast<std::ptrdiff_t>(link));
          break;  // indices moved: poll again
        }
      }
    }
  }
  void accept_one() {
    const int client = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) return;
    ++accepted_;
    const int server = connect_to_loopback(target_);
    if (server < 0) {
      ::close(client);
      return;
    }
    links_.emplace_back(client, server);
  }
  bool forward(int from, int to, bool upstream) {
    char buf[16384];
    const ssize_t n = ::read(from, buf, sizeof buf);
    if (n <= 0) return false;
    if (!upstream && muted_) return true;
    if (silenced(from, to, std::string_view(buf, static_cast<std::size_t>(n)), upstream)) return true;
    for (ssize_t done = 0; done < n;) {
      const ssize_t w = ::send(to, buf + done, static_cast<std::size_t>(n - done), MSG_NOSIGNAL);
      if (w <= 0) return false;
      done += w;
    }
    if (upstream) {
      std::lock_guard<std::mutex> g(mutex_);
      if (!cut_markers_.empty() &&
          std::string_view(buf, static_cast<std::size_t>(n)).find(cut_markers_.front()) != std::string_view::npos) {
        cut_markers_.erase(cut_markers_.begin());
        ++cuts_;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));  // let the server run it first
        return false;
      }
    }
    return true;
  }

  bool silenced(int from, int to, std::string_view chunk, bool upstream) {
    std::lock_guard<std::mutex> g(mutex_);
    const int client = upstream ? from : to;
    for (int c : silent_clients_) {
      if (c == client) return true;
    }
    if (!upstream || silence_marker_.empty() || chunk.find(silence_marker_) == std::string_view::npos) return false;
    silent_clients_.push_back(client);
    return true;
  }

  void forget_silent(int client) {
    std::lock_guard<std::mutex> g(mutex_);
    for (auto i = silent_clients_.begin(); i != silent_clients_.end(); ++i) {
      if (*i == client) {
        silent_clients_.erase(i);
        return;
      }
    }
  }

  std::uint16_t target_;
  std::uint16_t port_ = 0;
  int listener_ = -1;
  std::vector<std::pair<int, int>> links_;  // (client side, server side); the proxy thread's own
  std::atomic<bool> frozen_{false};
  std::mutex mutex_;
  std::vector<std::string> cut_markers_;
  std::string silence_marker_;
  std::vector<int> silent_clients_;  // client-side sockets of silenced links
  std::atomic<bool> muted_{false};
  std::atomic<bool> drop_{false};
  std::atomic<int> cuts_{0};
  std::atomic<int> accepted_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace deadbolt::test

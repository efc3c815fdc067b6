// The system resolver (getaddrinfo, run by Asio on its own thread): host names, /etc/hosts, NSS.
#include <memory>
#include <string>
#include <utility>

#include "deadbolt/port/resolver.hpp"

namespace deadbolt::port {
namespace {

class system_resolver final : public host_resolver {
 public:
  explicit system_resolver(const asio::any_io_executor& ex) : resolver_(ex) {}

  void async_resolve(const std::string& host, std::uint16_t port, handler done) override {
    // getaddrinfo runs on Asio's own thread and may already be done when cancel() is called; the
    // generation makes "cancelled" mean operation_aborted regardless of that race.
    resolver_.async_resolve(host, std::to_string(port),
                            [done = std::move(done), generation = generation_, started = *generation_](
                                std::error_code ec, asio::ip::tcp::resolver::results_type results) {
                              if (!ec && *generation != started) ec = asio::error::operation_aborted;
                              std::vector<asio::ip::tcp::endpoint> endpoints;
                              if (!ec) {
                                for (const auto& entry : results) endpoints.push_back(entry.endpoint());
                              }
                              done(ec, std::move(endpoints));
                            });
  }
  void cancel() noexcept override {
    ++*generation_;
    resolver_.cancel();
  }

 private:
  asio::ip::tcp::resolver resolver_;
  std::shared_ptr<std::uint64_t> generation_ = std::make_shared<std::uint64_t>(0);
};

}  // namespace

bool resolves_host_names() noexcept { return true; }

std::unique_ptr<host_resolver> make_host_resolver(const asio::any_io_executor& ex) {
  return std::make_unique<system_resolver>(ex);
}

}  // namespace deadbolt::port

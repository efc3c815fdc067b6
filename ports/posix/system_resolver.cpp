// The system resolver (getaddrinfo, run by Asio on its own thread): host names, /etc/hosts, NSS.
#include <string>
#include <utility>

#include "deadbolt/port/resolver.hpp"

namespace deadbolt::port {
namespace {

class system_resolver final : public host_resolver {
 public:
  explicit system_resolver(const asio::any_io_executor& ex) : resolver_(ex) {}

  void async_resolve(const std::string& host, std::uint16_t port, handler done) override {
    resolver_.async_resolve(host, std::to_string(port),
                            [done = std::move(done)](std::error_code ec, asio::ip::tcp::resolver::results_type results) {
                              std::vector<asio::ip::tcp::endpoint> endpoints;
                              if (!ec) {
                                for (const auto& entry : results) endpoints.push_back(entry.endpoint());
                              }
                              done(ec, std::move(endpoints));
                            });
  }
  void cancel() noexcept override { resolver_.cancel(); }

 private:
  asio::ip::tcp::resolver resolver_;
};

}  // namespace

bool resolves_host_names() noexcept { return true; }

std::unique_ptr<host_resolver> make_host_resolver(const asio::any_io_executor& ex) {
  return std::make_unique<system_resolver>(ex);
}

}  // namespace deadbolt::port

#include "wire/tls_failures.hpp"

#include <atomic>
#include <string>

#include "deadbolt/error.hpp"

namespace deadbolt {
namespace {

std::atomic<const detail::tls_error_words*> installed_words{nullptr};

class tls_verify_category_impl final : public std::error_category {
 public:
  const char* name() const noexcept override { return "deadbolt.tls_verify"; }
  std::string message(int code) const override {
    if (const detail::tls_error_words* words = installed_words.load(std::memory_order_acquire)) {
      return std::string("certificate verify failed: ") + words->verify_text(code);
    }
    return "certificate verify failed: OpenSSL verification error " + std::to_string(code);
  }
};

}  // namespace

const std::error_category& tls_verify_category() noexcept {
  static const tls_verify_category_impl instance;
  return instance;
}

namespace detail {

void install_tls_error_words(const tls_error_words& words) noexcept {
  installed_words.store(&words, std::memory_order_release);
}

bool is_permanent_tls_failure(std::error_code ec) noexcept {
  if (ec.category() == tls_verify_category()) return true;
  // OpenSSL's own errors. Not Asio's stream category (stream_truncated: the connection just ended)
  // nor system errors.
  const tls_error_words* words = installed_words.load(std::memory_order_acquire);
  return words != nullptr && ec.category() == *words->library_errors;
}

}  // namespace detail
}  // namespace deadbolt

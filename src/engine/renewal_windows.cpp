#include "engine/renewal_windows.hpp"

namespace deadbolt::detail {

renewal_windows::renewal_windows(std::size_t nodes, int places) : windows_(nodes > 0 ? nodes : 1), places_(places) {}

request* renewal_windows::take(std::uint32_t node) noexcept {
  window& w = at(node);
  return w.in_flight < places_ ? w.waiting.pop_front() : nullptr;
}

void renewal_windows::done(std::uint32_t node) noexcept {
  window& w = at(node);
  if (w.in_flight > 0) --w.in_flight;
}

request* renewal_windows::take_any_waiting() noexcept {
  for (window& w : windows_) {
    if (request* r = w.waiting.pop_front()) return r;
  }
  return nullptr;
}

}  // namespace deadbolt::detail

// config::why_invalid(): the checks' findings in words. Its own file, so that a program that never
// asks links neither it nor the URL explanations.
#include "config/config_check.hpp"
#include "deadbolt/config.hpp"
#include "deadbolt/url.hpp"

namespace deadbolt {

std::string config::why_invalid() const {
  endpoint ep;
  detail::config_problem problem;
  if (!detail::check_config(*this, ep, &problem)) return {};
  std::string out = problem.field ? problem.field : "config";
  if (!problem.detail.empty()) return out + "." + problem.detail;  // tls.ca_file '...': ...
  out += ": ";
  if (problem.reason) {
    out += problem.reason;
  } else if (out == "url: ") {
    out += why_invalid_url(url);
  } else {
    out += "invalid";
  }
  return out;
}

}  // namespace deadbolt

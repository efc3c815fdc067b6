// deadbolt ping: a health check. Connects (and logs in), sends PING, says how long it took.
#include <chrono>
#include <cstdio>

#include "commands.hpp"
#include "connect.hpp"
#include "duration.hpp"
#include "exit_codes.hpp"
#include "json.hpp"

namespace deadbolt::cli {

int ping_command(const options& o) {
  asio::io_context io;
  deadbolt::client client(io.get_executor(), make_config(o));
  connector connecting(io, client, o);
  int code = exit_failure;
  connecting.start(o.connect_timeout, [&](int connect_code) {
    if (connect_code != 0) {
      code = connect_code;
      return client.shutdown();
    }
    const auto sent = std::chrono::steady_clock::now();
    client.async_command({"PING"}, [&, sent](std::error_code ec, deadbolt::reply r) {
      if (ec) {
        code = report_error(o, ec, "PING");
      } else {
        const auto took = std::chrono::steady_clock::now() - sent;
        const double ms = std::chrono::duration<double, std::milli>(took).count();
        if (o.json) {
          json out;
          out.begin_object();
          out.key("reply").string(r.text);
          out.key("server").string(where(o));
          out.key("round_trip_us").number(std::chrono::duration_cast<std::chrono::microseconds>(took).count());
          out.end_object();
          std::printf("%s\n", out.text().c_str());
        } else {
          std::printf("%s from %s in %.2fms\n", r.text.c_str(), where(o).c_str(), ms);
        }
        code = exit_ok;
      }
      client.shutdown();
    });
  });
  io.run();
  return code;
}

}  // namespace deadbolt::cli

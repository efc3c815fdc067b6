// The parts of Asio the library's own sources use (src/): the event loop, timers, stream sockets and
// addresses, posting and binding, cancellation and the executor properties. Narrower than all of
// Asio (deadbolt/port/asio.hpp, for tests and tools) on purpose: every unit that includes an Asio
// service gets a static initializer for it, which a static embedded program pays for once per unit
// (bench/run footprint), and the units compile faster.
#pragma once

#include "deadbolt/port/asio_config.hpp"

#include <asio/any_io_executor.hpp>
#include <asio/associated_allocator.hpp>
#include <asio/associated_cancellation_slot.hpp>
#include <asio/associated_executor.hpp>
#include <asio/async_result.hpp>
#include <asio/bind_allocator.hpp>
#include <asio/bind_cancellation_slot.hpp>
#include <asio/bind_executor.hpp>
#include <asio/buffer.hpp>
#include <asio/cancellation_signal.hpp>
#include <asio/cancellation_type.hpp>
#include <asio/dispatch.hpp>
#include <asio/error.hpp>
#include <asio/execution.hpp>
#include <asio/executor_work_guard.hpp>
#include <asio/generic/stream_protocol.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/address.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/local/stream_protocol.hpp>
#include <asio/post.hpp>
#include <asio/prefer.hpp>
#include <asio/query.hpp>
#include <asio/require.hpp>
#include <asio/steady_timer.hpp>
#include <asio/strand.hpp>
#include <asio/write.hpp>

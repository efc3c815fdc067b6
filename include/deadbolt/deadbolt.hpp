// deadbolt: Redisson-compatible distributed locks on Redis. The umbrella header.
#pragma once

#include "deadbolt/blocking.hpp"
#include "deadbolt/blocking_multi_lock.hpp"
#include "deadbolt/client.hpp"
#include "deadbolt/config.hpp"
#include "deadbolt/count_down_latch.hpp"
#include "deadbolt/error.hpp"
#include "deadbolt/expirable_semaphore.hpp"
#include "deadbolt/fair_lock.hpp"
#include "deadbolt/multi_lock.hpp"
#include "deadbolt/owner_id.hpp"
#include "deadbolt/permit_id.hpp"
#include "deadbolt/read_write_lock.hpp"
#include "deadbolt/reentrant_lock.hpp"
#include "deadbolt/semaphore.hpp"
#include "deadbolt/spin_backoff.hpp"
#include "deadbolt/version.hpp"

// deadbolt: distributed locks on Redis. Include this one header.
#pragma once

#include "deadbolt/client.hpp"
#include "deadbolt/duration.hpp"
#include "deadbolt/error.hpp"
#include "deadbolt/lease.hpp"
#include "deadbolt/mutex.hpp"
#include "deadbolt/options.hpp"

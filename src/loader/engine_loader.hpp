// The engines this build made, loaded when a URL needs one: a program that links the core alone
// (the CLI, the Python and Node.js bindings) loads Redis's library for a Redis URL and nothing of
// gRPC (60 libraries), ZooKeeper or the databases. Built with static libraries, every engine is
// linked in and nothing is loaded.
#pragma once

#include <string_view>

namespace deadbolt::detail {

/// Makes the engine that takes url's scheme available to Client::connect: that engine's
/// library, or every one when no built engine claims the scheme (so that the unknown-scheme
/// error names them all). Throws UsageError (invalid_argument) naming a library that cannot be
/// loaded and what to install.
void load_engine_for(std::string_view url);

/// The name of the built engine that takes url's scheme ("redis" for rediss://, "zookeeper"
/// for zk://); empty when none does.
std::string_view engine_for(std::string_view url);

/// Loads every engine built (for a list of URL forms); the same failures.
void load_all_engines();

/// The address of engine's C symbol name, loading the engine first; nullptr when absent.
void* engine_symbol(std::string_view engine, const char* name);

}  // namespace deadbolt::detail

// The engines this CLI was built with, loaded when a command needs one: `--version` and a
// command's `--help` load none but what --help lists, and a Redis URL loads Redis alone, so
// that the CLI starts in a few milliseconds whatever else was built (gRPC alone is 60
// libraries). A CLI built with static libraries has every engine linked in, and loads nothing.
#pragma once

#include <string_view>

namespace deadbolt::cli {

/// Makes the engine that takes url's scheme available to Client::connect: that engine's
/// library, or every one when no built engine claims the scheme (so that the unknown-scheme
/// error names them all). Throws UsageProblem naming a library that cannot be loaded.
void load_engine_for(std::string_view url);

/// The name of the built engine that takes url's scheme ("redis" for rediss://, "zookeeper"
/// for zk://); empty when none does.
std::string_view engine_for(std::string_view url);

/// Loads every engine built (for --help's list of URL forms); the same failures.
void load_all_engines();

/// The address of engine's C symbol name, loading the engine first; nullptr when absent.
void* engine_symbol(std::string_view engine, const char* name);

}  // namespace deadbolt::cli

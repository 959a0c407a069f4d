// Registers memory:// (an engine inside the process, for tests) with the engine registry
// (core/engines.hpp) when this library is linked in. deadbolt::memory's CMake target makes
// every link keep this object by naming its symbol.
#include "backends/memory/connect.hpp"
#include "core/engines.hpp"

extern "C" void deadbolt_engine_memory() {}

namespace deadbolt::detail {
namespace {

const EngineRegistration registration{Engine{
    .name = "memory",
    .schemes = {"memory"},
    .url_form = "memory://NAME (in this process, for tests)",
    .connect = &connect_memory,
}};

}  // namespace
}  // namespace deadbolt::detail

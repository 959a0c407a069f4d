// Registers file:// (one machine's lock files) with the engine registry (core/engines.hpp)
// when this library is linked in. deadbolt::files's CMake target makes every link keep this
// object by naming its symbol.
#include "backends/files/connect.hpp"
#include "core/engines.hpp"

extern "C" void deadbolt_engine_files() {}

namespace deadbolt::detail {
namespace {

const EngineRegistration registration{Engine{
    .name = "files",
    .schemes = {"file"},
    .url_form = "file:///absolute/directory (one machine's lock files)",
    .connect = &connect_file,
}};

}  // namespace
}  // namespace deadbolt::detail

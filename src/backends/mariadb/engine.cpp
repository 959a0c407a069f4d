// Registers MariaDB and MySQL with the engine registry (core/engines.hpp) when this library is
// linked in. deadbolt::mariadb's CMake target makes every link keep this object by naming its
// symbol.
#include "backends/mariadb/connect.hpp"
#include "core/engines.hpp"

extern "C" void deadbolt_engine_mariadb() {}

namespace deadbolt::detail {
namespace {

const EngineRegistration registration{Engine{
    .name = "mariadb",
    .schemes = {"mysql", "mariadb"},
    .url_form = "mysql://[user[:password]@]host[:port]/database (or mariadb://)",
    .connect = &connect_my,
}};

}  // namespace
}  // namespace deadbolt::detail

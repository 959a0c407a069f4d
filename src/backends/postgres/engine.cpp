// Registers PostgreSQL with the engine registry (core/engines.hpp) when this library is linked in.
// deadbolt::postgres's CMake target makes every link keep this object by naming its symbol.
#include "backends/postgres/connect.hpp"
#include "core/engines.hpp"

extern "C" void deadbolt_engine_postgres() {}

namespace deadbolt::detail {
namespace {

const EngineRegistration registration{Engine{
    .name = "postgres",
    .schemes = {"postgresql", "postgres"},
    .url_form = "postgresql://[user[:password]@]host[:port]/database",
    .connect = &connect_pg,
}};

}  // namespace
}  // namespace deadbolt::detail

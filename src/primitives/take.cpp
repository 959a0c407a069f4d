#include "primitives/take.hpp"

#include "deadbolt/client.hpp"
#include "deadbolt/error.hpp"

namespace deadbolt::detail {
namespace {

// acquire_lease, with exceptions caught into st when the caller wants an error_code.
Lease run(const std::shared_ptr<ClientImpl>& client, const LockSpec& spec,
          const AcquireOptions& how, Status& st, bool catch_all, SpareClaim* spare = nullptr) {
    if (!catch_all) return acquire_lease(client, spec, how, st, spare);
    try {
        return acquire_lease(client, spec, how, st, spare);
    } catch (const std::bad_alloc&) {
        st = {std::make_error_code(std::errc::not_enough_memory), "out of memory"};
    } catch (const std::exception& ex) {
        st = Status::error(errc::server_error, ex.what());
    }
    return {};
}

}  // namespace

Lease take(const std::shared_ptr<ClientImpl>& client, const LockSpec& spec,
           const AcquireOptions& how, std::error_code* ec) {
    Status st;
    Lease l = run(client, spec, how, st, ec != nullptr);
    if (ec)
        *ec = st.ec;
    else
        st.throw_if_error();
    return l;
}

bool take(const std::shared_ptr<ClientImpl>& client, const LockSpec& spec,
          Clock::time_point deadline, Lease& out, std::error_code* ec, SpareClaim* spare) {
    AcquireOptions how;
    if (deadline != Clock::time_point::max()) how.deadline = deadline;
    Status st;
    out = run(client, spec, how, st, ec != nullptr, spare);
    if (st.ec == make_error_code(errc::not_acquired)) st = {};
    if (ec)
        *ec = st.ec;
    else
        st.throw_if_error();
    return static_cast<bool>(out);
}

}  // namespace deadbolt::detail

#include "deadbolt/semaphore.hpp"

#include "core/client_impl.hpp"
#include "deadbolt/error.hpp"
#include "primitives/take.hpp"

namespace deadbolt {

Semaphore::Semaphore(std::shared_ptr<detail::ClientImpl> client, std::string name, int permits,
                     MutexOptions options)
    : client_(std::move(client)),
      name_(std::move(name)),
      permits_(permits),
      options_(std::move(options)) {}

Semaphore::~Semaphore() {
    std::deque<Lease> leases;
    {
        std::lock_guard lk(m_);
        leases.swap(leases_);
    }
    // Each Lease's destructor returns its permit; never throws.
}

Semaphore::Semaphore(Semaphore&& other) noexcept
    : client_(std::move(other.client_)),
      name_(std::move(other.name_)),
      permits_(other.permits_),
      options_(std::move(other.options_)) {
    std::lock_guard lk(other.m_);
    leases_.swap(other.leases_);
}

bool Semaphore::acquire_until(clock::time_point deadline, std::error_code* ec) {
    Lease l;
    if (!detail::take(client_, detail::permits_spec(name_, options_, permits_), deadline, l, ec))
        return false;
    std::lock_guard lk(m_);
    leases_.push_back(std::move(l));
    return true;
}

void Semaphore::acquire() {
    acquire_until(clock::time_point::max(), nullptr);
}

void Semaphore::acquire(std::error_code& ec) noexcept {
    detail::without_throwing(ec, [&] { acquire_until(clock::time_point::max(), &ec); });
}

bool Semaphore::try_acquire() {
    return acquire_until(clock::now(), nullptr);
}

void Semaphore::release() {
    std::error_code ec;
    release(ec);
    if (ec)
        throw_error(
            ec, ec == make_error_code(errc::not_owner)
                    ? "Semaphore '" + name_ + "': no permit to release (none held, or it expired)"
                    : ec.message());
}

void Semaphore::release(std::error_code& ec) noexcept {
    ec.clear();
    std::optional<Lease> l;
    {
        std::lock_guard lk(m_);
        if (leases_.empty()) {
            ec = make_error_code(errc::not_owner);
            return;
        }
        l.emplace(std::move(leases_.front()));
        leases_.pop_front();
    }
    l->release(ec);
}

std::size_t Semaphore::held() const {
    std::lock_guard lk(m_);
    return leases_.size();
}

int Semaphore::available() const {
    int in_use = 0;
    client_->offered(&detail::Store::permits)
        .permits_in_use(name_, permits_, in_use)
        .throw_if_error();
    return permits_ - in_use;
}

}  // namespace deadbolt

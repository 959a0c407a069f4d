#include "completions.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>

#include "errors.hpp"
#include "lease.hpp"

namespace deadbolt::python {

Completions::Completions() : fd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
    if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "eventfd");
}

Completions::~Completions() {
    ::close(fd_);
}

void Completions::push(const detail::LoopHandle& from, Ref target, std::error_code ec,
                       std::string why, std::optional<Lease> lease) noexcept {
    bool first = false;
    bool defer = from.here();
    try {
        std::lock_guard g(m_);
        first = items_.empty() && !wake_posted_;
        items_.push_back({std::move(target), ec, std::move(why), std::move(lease)});
        if (first && defer) wake_posted_ = true;
    } catch (...) {
        return;
    }
    // One wake-up per batch: the loop drains everything that came before it reads again; on
    // deadbolt's loop, after the other replies it has ready now.
    if (!first) return;
    if (!defer) return wake();
    from.post([self = shared_from_this()] {
        {
            std::lock_guard g(self->m_);
            self->wake_posted_ = false;
        }
        self->wake();
    });
}

void Completions::wake() noexcept {
    std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(fd_, &one, sizeof one);
}

void Completions::send(const detail::LoopHandle& to, std::function<void()> start) {
    outbox_.emplace_back(to, std::move(start));
}

void Completions::flush() {
    auto out = std::exchange(outbox_, {});
    py::gil_scoped_release nogil;
    detail::post_batched(std::move(out));
}

py::list Completions::drain() {
    std::vector<Item> items;
    {
        std::lock_guard g(m_);
        std::uint64_t count = 0;
        [[maybe_unused]] auto n = ::read(fd_, &count, sizeof count);
        items.swap(items_);
    }
    py::list out;
    for (auto& it : items) {
        py::object exc = py::none(), lease = py::none();
        if (it.ec)
            exc = exception_for(it.ec, it.why);
        else if (it.lease)
            lease = py::cast(std::make_unique<PyLease>(std::move(*it.lease)));
        out.append(py::make_tuple(it.target->get(), exc, lease));
    }
    return out;
}

void define_completions(py::module_& m) {
    py::class_<Completions, std::shared_ptr<Completions>>(
        m, "Completions", "Finished asynchronous calls waiting for one asyncio loop.")
        .def(py::init<>())
        .def("fileno", &Completions::fileno)
        .def("drain", &Completions::drain)
        .def("flush", &Completions::flush);
}

}  // namespace deadbolt::python

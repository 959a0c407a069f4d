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

void Completions::push(Ref target, std::error_code ec, std::string why,
                       std::optional<Lease> lease) noexcept {
    bool was_empty = false;
    try {
        std::lock_guard g(m_);
        was_empty = items_.empty();
        items_.push_back({std::move(target), ec, std::move(why), std::move(lease)});
    } catch (...) {
        return;
    }
    // One wake-up per batch: the loop drains everything that came before it reads again.
    if (was_empty) {
        std::uint64_t one = 1;
        [[maybe_unused]] auto n = ::write(fd_, &one, sizeof one);
    }
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
        .def("drain", &Completions::drain);
}

}  // namespace deadbolt::python

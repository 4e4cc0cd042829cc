/* rtl::region_ptr<T> — the C++ region pointer of the paper's Table 2,
 * column 4: a T* that registers itself with rtl (region_ptr) when it is
 * constructed and unregisters (region_ptr_free) when it is destroyed, so
 * that region_protect keeps it pointing into the right view. See
 * docs/cpp.md.
 *
 * It is an unbounded pointer: it may point into any region, or elsewhere.
 * Its value lives in a volatile member, so every use reloads it and the
 * compiler never keeps a copy that a protection change would leave behind. */
#ifndef RTL_REGION_HPP
#define RTL_REGION_HPP

#include <rtl/region.h>

#include <cstddef>
#include <cstdlib>
#include <new>
#include <type_traits>

namespace rtl {

template <typename T>
class region_ptr {
public:
	using element_type = T;
	using pointer = T *;
	using reference = typename std::add_lvalue_reference<T>::type;

	region_ptr() : p_(nullptr) { enrol(); }
	region_ptr(std::nullptr_t) : p_(nullptr) { enrol(); }
	region_ptr(T *p) : p_(p) { enrol(); }
	/* A copy is a second registered pointer with the same value. */
	region_ptr(const region_ptr &o) : p_(o.get()) { enrol(); }
	/* Moving a pointer copies it: the source stays valid and registered
	 * until it is destroyed. */
	region_ptr(region_ptr &&o) : p_(o.get()) { enrol(); }
	~region_ptr() { ::region_ptr_free(var()); }

	/* Assignment changes the value only: each object stays registered at
	 * its own address. */
	region_ptr &operator=(const region_ptr &o)
	{
		p_ = o.get();
		return *this;
	}
	region_ptr &operator=(T *p)
	{
		p_ = p;
		return *this;
	}
	region_ptr &operator=(std::nullptr_t)
	{
		p_ = nullptr;
		return *this;
	}

	T *get() const { return p_; }
	operator T *() const { return p_; } /* wherever a T* is expected */

	/* The pointer variable rtl rewrites: what region_ptr_free, region_bptr
	 * and region_protect_ptr take. */
	void *var() const { return (void *)&p_; }

	reference operator*() const { return *get(); }
	T *operator->() const { return get(); }
	reference operator[](std::ptrdiff_t i) const { return get()[i]; }

	region_ptr &operator++()
	{
		p_ = get() + 1;
		return *this;
	}
	region_ptr &operator--()
	{
		p_ = get() - 1;
		return *this;
	}
	/* Postfix returns the old value as a plain T*: a temporary region_ptr
	 * would register and unregister for nothing. */
	T *operator++(int)
	{
		T *old = get();
		p_ = old + 1;
		return old;
	}
	T *operator--(int)
	{
		T *old = get();
		p_ = old - 1;
		return old;
	}
	region_ptr &operator+=(std::ptrdiff_t n)
	{
		p_ = get() + n;
		return *this;
	}
	region_ptr &operator-=(std::ptrdiff_t n)
	{
		p_ = get() - n;
		return *this;
	}

	friend T *operator+(const region_ptr &p, std::ptrdiff_t n) { return p.get() + n; }
	friend T *operator+(std::ptrdiff_t n, const region_ptr &p) { return p.get() + n; }
	friend T *operator-(const region_ptr &p, std::ptrdiff_t n) { return p.get() - n; }
	friend std::ptrdiff_t operator-(const region_ptr &a, const region_ptr &b)
	{
		return a.get() - b.get();
	}

#define RTL_REGION_PTR_COMPARE(op)                                        \
	friend bool operator op(const region_ptr &a, const region_ptr &b) \
	{                                                                 \
		return a.get() op b.get();                                \
	}                                                                 \
	friend bool operator op(const region_ptr &a, T *b)                \
	{                                                                 \
		return a.get() op b;                                      \
	}                                                                 \
	friend bool operator op(T *a, const region_ptr &b)                \
	{                                                                 \
		return a op b.get();                                      \
	}
	RTL_REGION_PTR_COMPARE(==)
	RTL_REGION_PTR_COMPARE(!=)
	RTL_REGION_PTR_COMPARE(<)
	RTL_REGION_PTR_COMPARE(<=)
	RTL_REGION_PTR_COMPARE(>)
	RTL_REGION_PTR_COMPARE(>=)
#undef RTL_REGION_PTR_COMPARE

private:
	T *volatile p_;

	void enrol()
	{
		if (::region_ptr(var()) == 0)
			return;
#if defined(__cpp_exceptions)
		throw std::bad_alloc(); /* ENOMEM: the only way it can fail */
#else
		std::abort();
#endif
	}
};

} // namespace rtl

#endif /* RTL_REGION_HPP */

/* Optional accelerator of a waiting send's transfer and its write (provider/amqp/write_through.py).
 *
 * A synchronous send's own time is Python run cold: its thread slept in the kernel since the last
 * answer, and everything it runs before the next write is on the round trip. This does in one
 * call what the Python path does in a dozen: proton's pn_delivery, pn_link_send and
 * pn_link_advance, then, when what proton has to send is exactly one frame that the outgoing
 * editor leaves alone, sends it on the socket.
 *
 * - bind(path, delivery_event): resolve proton's functions in the library python-qpid-proton
 *   loaded (its cffi module, already in the process: RTLD_NOLOAD), by name: the same functions
 *   cffi calls; delivery_event is PN_DELIVERY's value (an enum, which cffi knows).
 * - transfer_out(link, tag, data, transport, fd) -> (delivery, rest): link and transport are the
 *   addresses of a pn_link_t and a pn_transport_t, fd the connection's socket. delivery is the
 *   new pn_delivery_t's address. rest is None when proton's output went out whole (or it had
 *   none), LEFT when the output is not one plain frame (left in proton, for the Python path to
 *   write through the outgoing editor), or the bytes the socket did not take (already taken from
 *   proton: the caller writes them next, before anything else).
 * - one_plain_frame(data) -> bool: the rule deciding that (the twin of outgoing._one_plain_frame).
 * - read_in(fd, transport, collector, delivery) -> status: the other end of the round trip, for
 *   a caller that reads its own answer (AmqpProvider.answer_here): one read of the socket straight
 *   into proton's input buffer, processed; SOLE (1) when the only event then pending is a
 *   delivery event of the pn_delivery_t at address delivery (its answer, to be read by the
 *   producer: AmqpProducer.accepted_alone), TAKEN (0) when the bytes went in but that is not so
 *   (the events are the provider's to handle), AGAIN (-1) when there was nothing to read, GONE
 *   (-2) when the socket has ended or failed or the transport takes no more input (read or
 *   pushed nothing: the loop meets that itself). delivery 0 matches no event.
 *
 * The caller holds the connection's loop (LoopThread.run_if_idle) and has checked that the
 * socket's transport buffers nothing: nothing else writes to fd meanwhile. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

/* proton's pn_bytes_t (pn_delivery_tag_t), passed by value as proton declares it */
typedef struct { size_t size; const char *start; } pn_bytes;

static void *(*pn_delivery_)(void *link, pn_bytes tag);
static ssize_t (*pn_link_send_)(void *link, const char *bytes, size_t n);
static _Bool (*pn_link_advance_)(void *link);
static ssize_t (*pn_transport_pending_)(void *transport);
static const char *(*pn_transport_head_)(void *transport);
static void (*pn_transport_pop_)(void *transport, size_t size);
static ssize_t (*pn_transport_capacity_)(void *transport);
static char *(*pn_transport_tail_)(void *transport);
static int (*pn_transport_process_)(void *transport, size_t size);
static void *(*pn_collector_peek_)(void *collector);
static _Bool (*pn_collector_more_)(void *collector);
static int (*pn_event_type_)(void *event); /* (pn_event_type_t, an enum) */
static void *(*pn_event_delivery_)(void *event);
static int bound;
static int delivery_event; /* PN_DELIVERY's value, given to bind by cffi, which knows the enum */

enum { SOLE = 1, TAKEN = 0, AGAIN = -1, GONE = -2 };

static PyObject *LEFT;

static PyObject *bind_proton(PyObject *self, PyObject *args) {
    const char *path;
    if (!PyArg_ParseTuple(args, "si:bind", &path, &delivery_event))
        return NULL;
    void *lib = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    if (lib == NULL)
        return PyErr_Format(PyExc_ImportError, "proton is not loaded from %s", path);
    struct { void **fn; const char *name; } table[] = {
        {(void **)&pn_delivery_, "pn_delivery"},
        {(void **)&pn_link_send_, "pn_link_send"},
        {(void **)&pn_link_advance_, "pn_link_advance"},
        {(void **)&pn_transport_pending_, "pn_transport_pending"},
        {(void **)&pn_transport_head_, "pn_transport_head"},
        {(void **)&pn_transport_pop_, "pn_transport_pop"},
        {(void **)&pn_transport_capacity_, "pn_transport_capacity"},
        {(void **)&pn_transport_tail_, "pn_transport_tail"},
        {(void **)&pn_transport_process_, "pn_transport_process"},
        {(void **)&pn_collector_peek_, "pn_collector_peek"},
        {(void **)&pn_collector_more_, "pn_collector_more"},
        {(void **)&pn_event_type_, "pn_event_type"},
        {(void **)&pn_event_delivery_, "pn_event_delivery"},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        void *fn = dlsym(lib, table[i].name);
        if (fn == NULL) {
            dlclose(lib);
            return PyErr_Format(PyExc_ImportError, "%s has no %s", path, table[i].name);
        }
        *table[i].fn = fn;
    }
    /* (the handle stays open: proton's functions are used for as long as this module is) */
    bound = 1;
    Py_RETURN_NONE;
}

/* outgoing._may_be_attach and _one_plain_frame, for a frame at the start of d */
static int may_be_attach(const unsigned char *d, size_t doff, size_t size) {
    if (d[5] != 0 || size <= doff + 2 || d[doff] != 0)
        return 0;
    unsigned char code = d[doff + 1];
    return (code == 0x53 && d[doff + 2] == 0x12) || code == 0x80;
}

static int one_plain_frame(const unsigned char *d, size_t n) {
    if (n < 8 || d[0] == 0x41) /* ("A": a protocol header) */
        return 0;
    size_t size = ((size_t)d[0] << 24) | ((size_t)d[1] << 16) | ((size_t)d[2] << 8) | d[3];
    size_t doff = (size_t)d[4] * 4;
    return size == n && doff >= 8 && doff <= n && !may_be_attach(d, doff, n);
}

static PyObject *py_one_plain_frame(PyObject *self, PyObject *arg) {
    Py_buffer b;
    if (PyObject_GetBuffer(arg, &b, PyBUF_SIMPLE) < 0)
        return NULL;
    int plain = one_plain_frame((const unsigned char *)b.buf, (size_t)b.len);
    PyBuffer_Release(&b);
    return PyBool_FromLong(plain);
}

static PyObject *transfer_out(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 5)
        return PyErr_Format(PyExc_TypeError, "transfer_out takes 5 arguments (%zd given)", nargs);
    if (!bound) {
        PyErr_SetString(PyExc_RuntimeError, "transfer_out before bind");
        return NULL;
    }
    if (!PyBytes_Check(args[1]) || !PyBytes_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "transfer_out: the tag and the data are bytes");
        return NULL;
    }
    void *link = PyLong_AsVoidPtr(args[0]);
    void *transport = PyLong_AsVoidPtr(args[3]);
    int fd = (int)PyLong_AsLong(args[4]);
    if (PyErr_Occurred())
        return NULL;
    if (link == NULL || transport == NULL) {
        PyErr_SetString(PyExc_ValueError, "transfer_out: a null link or transport");
        return NULL;
    }

    pn_bytes tag = {(size_t)PyBytes_GET_SIZE(args[1]), PyBytes_AS_STRING(args[1])};
    void *delivery = pn_delivery_(link, tag);
    if (delivery == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "proton made no delivery");
        return NULL;
    }
    pn_link_send_(link, PyBytes_AS_STRING(args[2]), (size_t)PyBytes_GET_SIZE(args[2]));
    pn_link_advance_(link);
    PyObject *address = PyLong_FromVoidPtr(delivery);
    if (address == NULL)
        return NULL;

    PyObject *rest;
    ssize_t pending = pn_transport_pending_(transport);
    if (pending == 0) {
        rest = Py_NewRef(Py_None);
    } else if (pending < 0) {
        rest = Py_NewRef(LEFT); /* the head is closed: the Python path says so */
    } else {
        const char *head = pn_transport_head_(transport);
        if (head == NULL || !one_plain_frame((const unsigned char *)head, (size_t)pending)) {
            rest = Py_NewRef(LEFT);
        } else {
            ssize_t sent;
            Py_BEGIN_ALLOW_THREADS
            sent = send(fd, head, (size_t)pending, MSG_DONTWAIT | MSG_NOSIGNAL);
            Py_END_ALLOW_THREADS
            /* nothing sent (a full socket, or an error the transport's own write then meets):
             * all of it is the caller's to write */
            if (sent < 0)
                sent = 0;
            if (sent == pending) {
                rest = Py_NewRef(Py_None);
            } else {
                rest = PyBytes_FromStringAndSize(head + sent, pending - sent);
                if (rest == NULL) {
                    /* (out of memory: what the socket took is taken from proton, which keeps the
                     * rest for the provider's next write, so no byte goes out twice) */
                    pn_transport_pop_(transport, (size_t)sent);
                    Py_DECREF(address);
                    return NULL;
                }
            }
            pn_transport_pop_(transport, (size_t)pending);
        }
    }
    PyObject *out = PyTuple_Pack(2, address, rest);
    Py_DECREF(address);
    Py_DECREF(rest);
    return out;
}

static PyObject *read_in(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4)
        return PyErr_Format(PyExc_TypeError, "read_in takes 4 arguments (%zd given)", nargs);
    if (!bound) {
        PyErr_SetString(PyExc_RuntimeError, "read_in before bind");
        return NULL;
    }
    int fd = (int)PyLong_AsLong(args[0]);
    void *transport = PyLong_AsVoidPtr(args[1]);
    void *collector = PyLong_AsVoidPtr(args[2]);
    void *delivery = PyLong_AsVoidPtr(args[3]);
    if (PyErr_Occurred())
        return NULL;
    if (transport == NULL || collector == NULL) {
        PyErr_SetString(PyExc_ValueError, "read_in: a null transport or collector");
        return NULL;
    }
    ssize_t capacity = pn_transport_capacity_(transport);
    if (capacity <= 0)
        return PyLong_FromLong(GONE);
    char *tail = pn_transport_tail_(transport);
    if (tail == NULL)
        return PyLong_FromLong(GONE);
    ssize_t n;
    int err;
    Py_BEGIN_ALLOW_THREADS
    n = read(fd, tail, (size_t)capacity);
    err = errno;
    Py_END_ALLOW_THREADS
    if (n < 0)
        return PyLong_FromLong(err == EAGAIN || err == EWOULDBLOCK || err == EINTR ? AGAIN : GONE);
    if (n == 0)
        return PyLong_FromLong(GONE); /* the end stays readable: the loop sees it too */
    /* (a framing error is an event like any other: the provider's handling meets it) */
    pn_transport_process_(transport, (size_t)n);
    void *event = pn_collector_peek_(collector);
    int sole = delivery != NULL && event != NULL && !pn_collector_more_(collector)
               && pn_event_type_(event) == delivery_event && pn_event_delivery_(event) == delivery;
    return PyLong_FromLong(sole ? SOLE : TAKEN);
}

static PyMethodDef methods[] = {
    {"bind", bind_proton, METH_VARARGS,
     "bind(path, delivery_event): resolve proton's functions in the library at path."},
    {"read_in", (PyCFunction)(void (*)(void))read_in, METH_FASTCALL,
     "read_in(fd, transport, collector, delivery) -> SOLE, TAKEN, AGAIN or GONE"},
    {"transfer_out", (PyCFunction)(void (*)(void))transfer_out, METH_FASTCALL,
     "transfer_out(link, tag, data, transport, fd) -> (delivery, rest)"},
    {"one_plain_frame", py_one_plain_frame, METH_O,
     "Whether data is exactly one whole frame, and no attach."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_ctransfer", NULL, -1, methods};

PyMODINIT_FUNC PyInit__ctransfer(void) {
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    LEFT = PyUnicode_InternFromString("left");
    if (LEFT == NULL || PyModule_AddObjectRef(m, "LEFT", LEFT) < 0
        || PyModule_AddIntConstant(m, "SOLE", SOLE) < 0 || PyModule_AddIntConstant(m, "TAKEN", TAKEN) < 0
        || PyModule_AddIntConstant(m, "AGAIN", AGAIN) < 0 || PyModule_AddIntConstant(m, "GONE", GONE) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}

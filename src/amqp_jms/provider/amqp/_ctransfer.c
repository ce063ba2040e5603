/* Optional accelerator of a waiting send's transfer and its write (provider/amqp/write_through.py).
 *
 * A synchronous send's own time is Python run cold: its thread slept in the kernel since the last
 * answer, and everything it runs before the next write is on the round trip. This does in one
 * call what the Python path does in a dozen: proton's pn_delivery, pn_link_send and
 * pn_link_advance, then, when what proton has to send is exactly one frame that the outgoing
 * editor leaves alone, sends it on the socket.
 *
 * - bind(path): resolve proton's functions in the library python-qpid-proton loaded (its cffi
 *   module, already in the process: RTLD_NOLOAD), by name: the same functions cffi calls.
 * - transfer_out(link, tag, data, transport, fd) -> (delivery, rest): link and transport are the
 *   addresses of a pn_link_t and a pn_transport_t, fd the connection's socket. delivery is the
 *   new pn_delivery_t's address. rest is None when proton's output went out whole (or it had
 *   none), LEFT when the output is not one plain frame (left in proton, for the Python path to
 *   write through the outgoing editor), or the bytes the socket did not take (already taken from
 *   proton: the caller writes them next, before anything else).
 * - one_plain_frame(data) -> bool: the rule deciding that (the twin of outgoing._one_plain_frame).
 *
 * The caller holds the connection's loop (LoopThread.run_if_idle) and has checked that the
 * socket's transport buffers nothing: nothing else writes to fd meanwhile. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlfcn.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>

/* proton's pn_bytes_t (pn_delivery_tag_t), passed by value as proton declares it */
typedef struct { size_t size; const char *start; } pn_bytes;

static void *(*pn_delivery_)(void *link, pn_bytes tag);
static ssize_t (*pn_link_send_)(void *link, const char *bytes, size_t n);
static _Bool (*pn_link_advance_)(void *link);
static ssize_t (*pn_transport_pending_)(void *transport);
static const char *(*pn_transport_head_)(void *transport);
static void (*pn_transport_pop_)(void *transport, size_t size);
static int bound;

static PyObject *LEFT;

static PyObject *bind_proton(PyObject *self, PyObject *arg) {
    const char *path = PyUnicode_AsUTF8(arg);
    if (path == NULL)
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
                    Py_DECREF(address);
                    return NULL; /* (proton keeps the bytes: the Python path writes them) */
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

static PyMethodDef methods[] = {
    {"bind", bind_proton, METH_O, "Resolve proton's functions in the library at path."},
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
    if (LEFT == NULL || PyModule_AddObjectRef(m, "LEFT", LEFT) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}

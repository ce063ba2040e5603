/* Optional accelerator of mapping.codec.sections.decode_sections: a transfer payload parsed into
 * its Sections in C.
 *
 * - decode_sections(data, *, body=True): the Sections the Python decode_sections returns.
 * - try_decode(data, body=True): the same, or None where this decoder does not go (no fallback).
 * - encode_plain(...): the other way, for a producer's plain text or bytes message whose shape
 *   mapping.outbound._encode knows (below).
 *
 * The C path covers what messages carry: the section framing with the short 0x00 0x53 descriptor,
 * and every AMQP type except char, the decimals, arrays and described values. Anything else, and
 * every malformed input (truncation, sizes or counts that do not add up, bad UTF-8, wrong field
 * types, section order, nesting deeper than MAX_DEPTH), makes it give up and call the Python
 * decode_sections, which then decodes the rare form or raises the MessageFormatException naming
 * what was wrong: results and errors are decided by one piece of code only.
 *
 * A hostile peer controls these bytes: every read is checked against the end of the enclosing
 * value (never past the buffer), every count against the bytes it must fit in before anything is
 * allocated for it. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>
#include <string.h>

#define MAX_DEPTH 32
#define SYMBOL_CACHE_MAX 4096

enum {
    HEADER = 0x70,
    DELIVERY_ANNOTATIONS = 0x71,
    MESSAGE_ANNOTATIONS = 0x72,
    PROPERTIES = 0x73,
    APPLICATION_PROPERTIES = 0x74,
    DATA = 0x75,
    AMQP_SEQUENCE = 0x76,
    AMQP_VALUE = 0x77,
    FOOTER = 0x78,
};

/* set by init(): the classes of sections.py and amqp_jms.types, and the Python twin */
static PyTypeObject *SectionsT, *HeaderT, *PropertiesT;
static PyTypeObject *UByteT, *UShortT, *UIntT, *ULongT, *ByteT, *ShortT, *IntT, *FloatT;
static PyTypeObject *TimestampT, *SymbolT, *UUIDT;
static PyObject *uuid_from_bytes, *py_decode;

static PyObject *ubytes[256], *small_uints[256], *small_ulongs[256], *sbytes[256], *small_ints[256];
static PyObject *symbols;   /* str -> Symbol, bounded */
static PyObject *four;      /* the default priority */
static PyObject *zero;      /* the default delivery-count */
static PyObject *s_data, *s_header, *s_da, *s_ma, *s_properties, *s_ap, *s_body_type, *s_body,
    *s_body_decoded, *s_footer, *s_spans, *s_body_kw;

/* Sections' slots, by their offsets in the instance (read from its member descriptors at
 * init): a new Sections is filled in like __init__ would, without a setattr per slot */
enum { F_DATA, F_HEADER, F_DA, F_MA, F_PROPERTIES, F_AP, F_BODY_TYPE, F_BODY, F_BODY_DECODED, F_FOOTER,
       F_SPANS, N_FIELDS };
static Py_ssize_t offsets[N_FIELDS];

/* Producers repeat the header and the message annotations byte for byte (same flags, same JMS
 * annotations): the last of each is kept by its bytes (the header shared, it is immutable; the
 * annotations copied) */
#define REMEMBER_MAX 128
typedef struct {
    unsigned char raw[REMEMBER_MAX];
    Py_ssize_t len;
    PyObject *value;
} Remembered;
static Remembered last_header, last_ma;

static PyObject *recall(Remembered *m, const unsigned char *raw, Py_ssize_t len) {
    if (m->value == NULL || m->len != len || memcmp(m->raw, raw, (size_t)len) != 0)
        return NULL;
    Py_INCREF(m->value);
    return m->value;
}

static void remember(Remembered *m, const unsigned char *raw, Py_ssize_t len, PyObject *value) {
    if (len > REMEMBER_MAX)
        return;
    memcpy(m->raw, raw, (size_t)len);
    m->len = len;
    Py_INCREF(value);
    Py_XSETREF(m->value, value);
}

typedef struct {
    const unsigned char *b;
    int depth;
} R;

static inline uint16_t be16(const unsigned char *p) { return (uint16_t)((p[0] << 8) | p[1]); }
static inline uint32_t be32(const unsigned char *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}
static inline uint64_t be64(const unsigned char *p) { return ((uint64_t)be32(p) << 32) | be32(p + 4); }

/* int.__new__(t, v) / float.__new__(t, v): the subclass instance without its range checks (the
 * wire format bounds the value), as the Python decoder builds them */
static PyObject *sub_new(PyTypeObject *base, PyTypeObject *t, PyObject *v) {
    if (v == NULL)
        return NULL;
    PyObject *args = PyTuple_Pack(1, v);
    Py_DECREF(v);
    if (args == NULL)
        return NULL;
    PyObject *r = base->tp_new(t, args, NULL);
    Py_DECREF(args);
    return r;
}
#define INT_OF(t, v) sub_new(&PyLong_Type, (t), (v))

static PyObject *cached(PyObject **table, unsigned char i) {
    Py_INCREF(table[i]);
    return table[i];
}

static PyObject *symbol(const unsigned char *s, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++)
        if (s[i] & 0x80)
            return NULL; /* not ASCII: the Python path says so */
    PyObject *str = PyUnicode_DecodeASCII((const char *)s, n, NULL);
    if (str == NULL)
        return NULL;
    PyObject *sym = PyDict_GetItemWithError(symbols, str);
    if (sym != NULL) {
        Py_DECREF(str);
        Py_INCREF(sym);
        return sym;
    }
    if (PyErr_Occurred()) {
        Py_DECREF(str);
        return NULL;
    }
    Py_INCREF(str);
    sym = sub_new(&PyUnicode_Type, SymbolT, str);
    if (sym == NULL) {
        Py_DECREF(str);
        return NULL;
    }
    if (PyDict_GET_SIZE(symbols) >= SYMBOL_CACHE_MAX)
        PyDict_Clear(symbols);
    int rc = PyDict_SetItem(symbols, str, sym);
    Py_DECREF(str);
    if (rc < 0) {
        Py_DECREF(sym);
        return NULL;
    }
    return sym;
}

static PyObject *value(R *r, Py_ssize_t *pp, Py_ssize_t end);

/* the elements of a list: count checked against the bytes they must fit in, ending at end */
static PyObject *items(R *r, Py_ssize_t p, Py_ssize_t end, uint32_t count) {
    if (p > end || (Py_ssize_t)count > end - p)
        return NULL;
    PyObject *out = PyList_New((Py_ssize_t)count);
    if (out == NULL)
        return NULL;
    for (uint32_t i = 0; i < count; i++) {
        PyObject *v = value(r, &p, end);
        if (v == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, i, v);
    }
    if (p != end) {
        Py_DECREF(out);
        return NULL;
    }
    return out;
}

static PyObject *pairs(R *r, Py_ssize_t p, Py_ssize_t end, uint32_t count) {
    if ((count & 1) || p > end || (Py_ssize_t)count > end - p)
        return NULL;
    PyObject *out = PyDict_New();
    if (out == NULL)
        return NULL;
    for (uint32_t i = 0; i < count / 2; i++) {
        PyObject *k = value(r, &p, end);
        if (k == NULL)
            goto fail;
        PyObject *v = value(r, &p, end);
        if (v == NULL) {
            Py_DECREF(k);
            goto fail;
        }
        int rc = PyDict_SetItem(out, k, v); /* an unhashable key (a list, a map) fails here */
        Py_DECREF(k);
        Py_DECREF(v);
        if (rc < 0)
            goto fail;
    }
    if (p != end)
        goto fail;
    return out;
fail:
    Py_DECREF(out);
    return NULL;
}

/* one value at *pp, not reaching past end; NULL (an exception may be set) = give up */
static PyObject *value(R *r, Py_ssize_t *pp, Py_ssize_t end) {
    const unsigned char *b = r->b;
    Py_ssize_t p = *pp;
    if (p >= end)
        return NULL;
    unsigned char c = b[p++];
    PyObject *v;
    Py_ssize_t e, size;
    uint32_t count;
#define NEED(k)            \
    if ((k) > end - p)     \
        return NULL;
    switch (c) {
    case 0x40: v = Py_None; Py_INCREF(v); break;
    case 0x41: v = Py_True; Py_INCREF(v); break;
    case 0x42: v = Py_False; Py_INCREF(v); break;
    case 0x56:
        NEED(1);
        if (b[p] > 1)
            return NULL;
        v = PyBool_FromLong(b[p]);
        p += 1;
        break;
    case 0x50: NEED(1); v = cached(ubytes, b[p]); p += 1; break;
    case 0x60: NEED(2); v = INT_OF(UShortT, PyLong_FromLong(be16(b + p))); p += 2; break;
    case 0x70: NEED(4); v = INT_OF(UIntT, PyLong_FromUnsignedLong(be32(b + p))); p += 4; break;
    case 0x52: NEED(1); v = cached(small_uints, b[p]); p += 1; break;
    case 0x43: v = cached(small_uints, 0); break;
    case 0x80: NEED(8); v = INT_OF(ULongT, PyLong_FromUnsignedLongLong(be64(b + p))); p += 8; break;
    case 0x53: NEED(1); v = cached(small_ulongs, b[p]); p += 1; break;
    case 0x44: v = cached(small_ulongs, 0); break;
    case 0x51: NEED(1); v = cached(sbytes, b[p]); p += 1; break;
    case 0x61: NEED(2); v = INT_OF(ShortT, PyLong_FromLong((int16_t)be16(b + p))); p += 2; break;
    case 0x71: NEED(4); v = INT_OF(IntT, PyLong_FromLong((int32_t)be32(b + p))); p += 4; break;
    case 0x54: NEED(1); v = cached(small_ints, b[p]); p += 1; break;
    case 0x81: NEED(8); v = PyLong_FromLongLong((int64_t)be64(b + p)); p += 8; break;
    case 0x55: NEED(1); v = PyLong_FromLong((signed char)b[p]); p += 1; break;
    case 0x72: {
        NEED(4);
        uint32_t u = be32(b + p);
        float f;
        memcpy(&f, &u, 4);
        v = sub_new(&PyFloat_Type, FloatT, PyFloat_FromDouble((double)f));
        p += 4;
        break;
    }
    case 0x82: {
        NEED(8);
        uint64_t u = be64(b + p);
        double d;
        memcpy(&d, &u, 8);
        v = PyFloat_FromDouble(d);
        p += 8;
        break;
    }
    case 0x83: NEED(8); v = INT_OF(TimestampT, PyLong_FromLongLong((int64_t)be64(b + p))); p += 8; break;
    case 0x98: {
        NEED(16);
        PyObject *raw = PyBytes_FromStringAndSize((const char *)b + p, 16);
        if (raw == NULL)
            return NULL;
        v = PyObject_CallOneArg(uuid_from_bytes, raw);
        Py_DECREF(raw);
        p += 16;
        break;
    }
    case 0xA0: case 0xA1: case 0xA3: case 0xB0: case 0xB1: case 0xB3:
        if (c & 0x10) {
            NEED(4);
            size = be32(b + p);
            p += 4;
        } else {
            NEED(1);
            size = b[p];
            p += 1;
        }
        NEED(size);
        if ((c & 0x0F) == 0x00)
            v = PyBytes_FromStringAndSize((const char *)b + p, size);
        else if ((c & 0x0F) == 0x01)
            v = PyUnicode_DecodeUTF8((const char *)b + p, size, NULL); /* strict, as bytes.decode() */
        else
            v = symbol(b + p, size);
        p += size;
        break;
    case 0x45: v = PyList_New(0); break;
    case 0xC0: case 0xC1: case 0xD0: case 0xD1:
        if (c & 0x10) {
            NEED(8);
            size = be32(b + p);
            count = be32(b + p + 4);
            e = p + 4 + size;
            p += 8;
        } else {
            NEED(1);
            size = b[p];
            e = p + 1 + size;
            if (size < 1 || e > end)
                return NULL;
            count = b[p + 1];
            p += 2;
        }
        if (e > end)
            return NULL;
        if (++r->depth > MAX_DEPTH)
            return NULL;
        v = (c & 0x01) ? pairs(r, p, e, count) : items(r, p, e, count);
        r->depth--;
        p = e;
        break;
    default: /* described values, arrays, char, decimals, invalid constructors */
        return NULL;
    }
#undef NEED
    *pp = p;
    return v;
}

/* the offset just past the value at p without decoding it (skip_at), or -1 */
static Py_ssize_t skip(const unsigned char *b, Py_ssize_t p, Py_ssize_t n, int depth) {
    if (p >= n || depth > MAX_DEPTH)
        return -1;
    unsigned char c = b[p++];
    Py_ssize_t e;
    switch (c) {
    case 0x40: case 0x41: case 0x42: case 0x43: case 0x44: case 0x45: e = p; break;
    case 0x50: case 0x51: case 0x52: case 0x53: case 0x54: case 0x55: case 0x56: e = p + 1; break;
    case 0x60: case 0x61: e = p + 2; break;
    case 0x70: case 0x71: case 0x72: case 0x73: case 0x74: e = p + 4; break;
    case 0x80: case 0x81: case 0x82: case 0x83: case 0x84: e = p + 8; break;
    case 0x94: case 0x98: e = p + 16; break;
    case 0x00: {
        Py_ssize_t q = skip(b, p, n, depth + 1);
        return q < 0 ? -1 : skip(b, q, n, depth + 1);
    }
    case 0xA0: case 0xA1: case 0xA3: case 0xC0: case 0xC1: case 0xE0:
        if (p >= n)
            return -1;
        e = p + 1 + b[p];
        break;
    case 0xB0: case 0xB1: case 0xB3: case 0xD0: case 0xD1: case 0xF0:
        if (4 > n - p)
            return -1;
        e = p + 4 + (Py_ssize_t)be32(b + p);
        break;
    default:
        return -1;
    }
    return e > n ? -1 : e;
}

static int is_type(PyObject *x, PyTypeObject *t) { return Py_IS_TYPE(x, t); }

/* tuple.__new__(t, fields): the NamedTuple instance (the reference to fields is taken) */
static PyObject *named(PyTypeObject *t, PyObject *fields) {
    if (fields == NULL)
        return NULL;
    PyObject *args = PyTuple_Pack(1, fields);
    Py_DECREF(fields);
    if (args == NULL)
        return NULL;
    PyObject *r = PyTuple_Type.tp_new(t, args, NULL);
    Py_DECREF(args);
    return r;
}

static PyObject *header_of(PyObject *v) {
    if (!PyList_CheckExact(v) || PyList_GET_SIZE(v) > 5)
        return NULL;
    PyObject *f[5] = {Py_False, four, Py_None, Py_False, zero};
    PyTypeObject *want[5] = {&PyBool_Type, UByteT, UIntT, &PyBool_Type, UIntT};
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(v); i++) {
        PyObject *x = PyList_GET_ITEM(v, i);
        if (x == Py_None)
            continue;
        if (!is_type(x, want[i]))
            return NULL;
        f[i] = x;
    }
    return named(HeaderT, PyTuple_Pack(5, f[0], f[1], f[2], f[3], f[4]));
}

static int id_type(PyObject *x) {
    return PyUnicode_CheckExact(x) || is_type(x, ULongT) || is_type(x, UUIDT) || PyBytes_CheckExact(x);
}

static PyObject *properties_of(PyObject *v) {
    if (!PyList_CheckExact(v) || PyList_GET_SIZE(v) > 13)
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(v);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = PyList_GET_ITEM(v, i);
        int ok;
        if (x == Py_None)
            continue;
        switch (i) {
        case 0: case 5: ok = id_type(x); break;
        case 1: ok = PyBytes_CheckExact(x); break;
        case 6: case 7: ok = is_type(x, SymbolT); break;
        case 8: case 9: ok = is_type(x, TimestampT); break;
        case 11: ok = is_type(x, UIntT); break;
        default: ok = PyUnicode_CheckExact(x); break; /* to, subject, reply-to, group ids */
        }
        if (!ok)
            return NULL;
    }
    PyObject *t = PyTuple_New(13);
    if (t == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < 13; i++) {
        PyObject *x = i < n ? PyList_GET_ITEM(v, i) : Py_None;
        Py_INCREF(x);
        PyTuple_SET_ITEM(t, i, x);
    }
    return named(PropertiesT, t);
}

static int annotations_ok(PyObject *v) {
    if (!PyDict_CheckExact(v))
        return 0;
    Py_ssize_t i = 0;
    PyObject *k, *x;
    while (PyDict_Next(v, &i, &k, &x))
        if (!is_type(k, SymbolT) && !is_type(k, ULongT))
            return 0;
    return 1;
}

static int application_properties_ok(PyObject *v) {
    if (!PyDict_CheckExact(v))
        return 0;
    Py_ssize_t i = 0;
    PyObject *k, *x;
    while (PyDict_Next(v, &i, &k, &x)) /* (arrays and described values never get here) */
        if (!PyUnicode_CheckExact(k) || PyList_Check(x) || PyDict_Check(x))
            return 0;
    return 1;
}

static int put_span(PyObject *spans, int code, Py_ssize_t s, Py_ssize_t e) {
    PyObject *k = PyLong_FromLong(code);
    PyObject *v = Py_BuildValue("(nn)", s, e);
    int rc = (k && v) ? PyDict_SetItem(spans, k, v) : -1;
    Py_XDECREF(k);
    Py_XDECREF(v);
    return rc;
}

/* The Sections of b, or NULL to give up (an exception may be set). */
static PyObject *decode(PyObject *data, int body) {
    const unsigned char *b = (const unsigned char *)PyBytes_AS_STRING(data);
    Py_ssize_t n = PyBytes_GET_SIZE(data);
    R r = {b, 0};
    PyObject *header = NULL, *da = NULL, *ma = NULL, *props = NULL, *ap = NULL, *bodyv = NULL,
             *footer = NULL, *spans = NULL, *s = NULL, *result = NULL;
    int body_type = 0, body_decoded = 1, last = 0;
    Py_ssize_t p = 0, body_start = -1;
    if (SectionsT == NULL)
        return NULL;
    spans = PyDict_New();
    if (spans == NULL)
        return NULL;
    while (p < n) {
        Py_ssize_t start = p, q;
        if (n - p < 3 || b[p] != 0x00 || b[p + 1] != 0x53)
            goto fail; /* other descriptor forms, and truncation, are the Python path's */
        int code = b[p + 2];
        q = p + 3;
        if (code < HEADER || code > FOOTER)
            goto fail;
        if (code > last) {
            if (last >= DATA && code <= AMQP_VALUE)
                goto fail;
        } else if (code != last || !(code == DATA || code == AMQP_SEQUENCE)) {
            goto fail;
        }
        last = code;
        if (code >= DATA && code <= AMQP_VALUE) {
            if (body_start < 0) {
                body_start = start;
                body_type = code;
            }
            if (!body) {
                p = skip(b, q, n, 0);
                if (p < 0 || put_span(spans, code, body_start, p) < 0)
                    goto fail;
                body_decoded = 0;
                continue;
            }
        }
        if (code == HEADER || code == MESSAGE_ANNOTATIONS) {
            Py_ssize_t e = skip(b, q, n, 0);
            PyObject *known = e < 0 ? NULL : recall(code == HEADER ? &last_header : &last_ma, b + q, e - q);
            if (known != NULL) {
                if (code == HEADER) {
                    header = known;
                } else {
                    ma = PyDict_Copy(known);
                    Py_DECREF(known);
                    if (ma == NULL)
                        goto fail;
                }
                p = e;
                if (put_span(spans, code, start, p) < 0)
                    goto fail;
                continue;
            }
        }
        r.depth = 0;
        Py_ssize_t vstart = q;
        PyObject *v = value(&r, &q, n);
        if (v == NULL)
            goto fail;
        p = q;
        PyObject **slot = NULL, *checked = NULL;
        switch (code) {
        case HEADER: checked = header_of(v); slot = &header; break;
        case PROPERTIES: checked = properties_of(v); slot = &props; break;
        case DELIVERY_ANNOTATIONS: case MESSAGE_ANNOTATIONS: case FOOTER:
            if (annotations_ok(v)) {
                Py_INCREF(v);
                checked = v;
            }
            slot = code == FOOTER ? &footer : code == MESSAGE_ANNOTATIONS ? &ma : &da;
            break;
        case APPLICATION_PROPERTIES:
            if (application_properties_ok(v)) {
                Py_INCREF(v);
                checked = v;
            }
            slot = &ap;
            break;
        case AMQP_VALUE:
            Py_INCREF(v);
            checked = v;
            slot = &bodyv;
            break;
        default: /* DATA, AMQP_SEQUENCE: repeat; the body is the list of their values */
            if (code == DATA ? !PyBytes_CheckExact(v) : !PyList_CheckExact(v)) {
                Py_DECREF(v);
                goto fail;
            }
            if (bodyv == NULL && (bodyv = PyList_New(0)) == NULL) {
                Py_DECREF(v);
                goto fail;
            }
            int rc = PyList_Append(bodyv, v);
            Py_DECREF(v);
            if (rc < 0 || put_span(spans, code, body_start, p) < 0)
                goto fail;
            continue;
        }
        Py_DECREF(v);
        if (checked == NULL)
            goto fail;
        *slot = checked;
        if (code == HEADER) {
            remember(&last_header, b + vstart, p - vstart, checked);
        } else if (code == MESSAGE_ANNOTATIONS) {
            PyObject *copy = PyDict_Copy(checked); /* (what is handed out may be changed) */
            if (copy == NULL)
                goto fail;
            remember(&last_ma, b + vstart, p - vstart, copy);
            Py_DECREF(copy);
        }
        if (put_span(spans, code, start, p) < 0)
            goto fail;
    }
    s = SectionsT->tp_alloc(SectionsT, 0);
    if (s == NULL)
        goto fail;
    {
        PyObject *bt = body_type ? PyLong_FromLong(body_type) : (Py_INCREF(Py_None), Py_None);
        if (bt == NULL)
            goto fail;
        PyObject *f[N_FIELDS] = {data, header, da, ma, props, ap, bt, bodyv,
                                 body_decoded ? Py_True : Py_False, footer, spans};
        for (int i = 0; i < N_FIELDS; i++) {
            PyObject *x = f[i] != NULL ? f[i] : Py_None;
            Py_INCREF(x);
            *(PyObject **)((char *)s + offsets[i]) = x; /* (tp_alloc zeroed the slots) */
        }
        Py_DECREF(bt);
    }
    result = s; /* (the slots hold their own references to what is released below) */
    s = NULL;
fail:
    Py_XDECREF(header);
    Py_XDECREF(da);
    Py_XDECREF(ma);
    Py_XDECREF(props);
    Py_XDECREF(ap);
    Py_XDECREF(bodyv);
    Py_XDECREF(footer);
    Py_XDECREF(spans);
    Py_XDECREF(s);
    return result;
}

static PyObject *as_bytes(PyObject *data) {
    if (PyBytes_CheckExact(data)) {
        Py_INCREF(data);
        return data;
    }
    return PyObject_CallOneArg((PyObject *)&PyBytes_Type, data);
}

static PyObject *try_decode(PyObject *self, PyObject *args) {
    PyObject *data;
    int body = 1;
    if (!PyArg_ParseTuple(args, "O|p:try_decode", &data, &body))
        return NULL;
    PyObject *b = as_bytes(data);
    if (b == NULL)
        return NULL;
    PyObject *s = decode(b, body);
    Py_DECREF(b);
    if (s == NULL) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    return s;
}

static PyObject *decode_sections(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    int body = 1;
    if (nargs != 1)
        return PyErr_Format(PyExc_TypeError, "decode_sections() takes 1 positional argument (%zd given)", nargs);
    if (kwnames != NULL) {
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(kwnames); i++) {
            if (PyUnicode_Compare(PyTuple_GET_ITEM(kwnames, i), s_body_kw) != 0) {
                if (!PyErr_Occurred())
                    PyErr_Format(PyExc_TypeError, "decode_sections() got an unexpected keyword argument %R",
                                 PyTuple_GET_ITEM(kwnames, i));
                return NULL;
            }
            body = PyObject_IsTrue(args[nargs + i]);
            if (body < 0)
                return NULL;
        }
    }
    PyObject *b = as_bytes(args[0]);
    if (b == NULL)
        return NULL;
    PyObject *s = decode(b, body);
    if (s != NULL) {
        Py_DECREF(b);
        return s;
    }
    PyErr_Clear();
    if (py_decode == NULL) {
        Py_DECREF(b);
        return PyErr_Format(PyExc_RuntimeError, "_csections.init() was not called");
    }
    /* the rare forms and every error: the Python twin decides */
    PyObject *kw = Py_BuildValue("{sO}", "body", body ? Py_True : Py_False);
    PyObject *a = kw ? PyTuple_Pack(1, b) : NULL;
    Py_DECREF(b);
    s = a ? PyObject_Call(py_decode, a, kw) : NULL;
    Py_XDECREF(a);
    Py_XDECREF(kw);
    return s;
}

static PyObject *init(PyObject *self, PyObject *args) {
    PyObject *t[13], *ufb, *pyd;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!O!O!O!O!O!O!O!O!OO:init", &PyType_Type, &t[0], &PyType_Type,
                          &t[1], &PyType_Type, &t[2], &PyType_Type, &t[3], &PyType_Type, &t[4],
                          &PyType_Type, &t[5], &PyType_Type, &t[6], &PyType_Type, &t[7], &PyType_Type,
                          &t[8], &PyType_Type, &t[9], &PyType_Type, &t[10], &PyType_Type, &t[11],
                          &PyType_Type, &t[12], &ufb, &pyd))
        return NULL;
    PyTypeObject **dst[13] = {&SectionsT, &HeaderT, &PropertiesT, &UByteT, &UShortT, &UIntT, &ULongT,
                              &ByteT, &ShortT, &IntT, &FloatT, &TimestampT, &SymbolT};
    for (int i = 0; i < 13; i++) {
        Py_INCREF(t[i]);
        Py_XSETREF(*dst[i], (PyTypeObject *)t[i]);
    }
    Py_INCREF(ufb);
    Py_XSETREF(uuid_from_bytes, ufb);
    Py_INCREF(pyd);
    Py_XSETREF(py_decode, pyd);
    for (int v = 0; v < 256; v++) {
        int sv = v > 127 ? v - 256 : v;
        Py_XSETREF(ubytes[v], INT_OF(UByteT, PyLong_FromLong(v)));
        Py_XSETREF(small_uints[v], INT_OF(UIntT, PyLong_FromLong(v)));
        Py_XSETREF(small_ulongs[v], INT_OF(ULongT, PyLong_FromLong(v)));
        Py_XSETREF(sbytes[v], INT_OF(ByteT, PyLong_FromLong(sv)));
        Py_XSETREF(small_ints[v], INT_OF(IntT, PyLong_FromLong(sv)));
        if (!ubytes[v] || !small_uints[v] || !small_ulongs[v] || !sbytes[v] || !small_ints[v])
            return NULL;
    }
    PyObject *names[N_FIELDS] = {s_data, s_header, s_da, s_ma, s_properties, s_ap, s_body_type, s_body,
                                 s_body_decoded, s_footer, s_spans};
    for (int i = 0; i < N_FIELDS; i++) {
        PyObject *d = PyDict_GetItemWithError(SectionsT->tp_dict, names[i]); /* borrowed */
        if (d == NULL || !Py_IS_TYPE(d, &PyMemberDescr_Type)
            || ((PyMemberDescrObject *)d)->d_member->type != T_OBJECT_EX) {
            Py_CLEAR(SectionsT);
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_TypeError, "Sections has no slot %R", names[i]);
            return NULL;
        }
        offsets[i] = ((PyMemberDescrObject *)d)->d_member->offset;
    }
    Py_CLEAR(last_header.value);
    Py_CLEAR(last_ma.value);
    PyDict_Clear(symbols);
    Py_RETURN_NONE;
}

/* -- encoding: a producer's plain message -------------------------------------------------------
 *
 * encode_plain(head, message_id, fields, timestamp, kind, body) -> bytes, or None where it does
 * not go: the transfer payload mapping.outbound._encode assembles for a "plain" message (its
 * _SHAPES: no properties, correlation, reply-to, subject or expiry, a usual JMSMessageID) whose
 * shape it has seen, byte for byte: head (the header and message-annotations sections), then the
 * properties section (message-id, the shape's fields from user-id to absolute-expiry-time,
 * creation-time), then the body: kind 5 (TEXT) an amqp-value string (or null), kind 3 (BYTES) a
 * data section. None (the Python path then encodes it, or says what is wrong) for another kind,
 * a body of another type, a string UTF-8 cannot carry, a timestamp past 64 bits. */

static void put_u32(unsigned char *p, size_t v) {
    p[0] = (unsigned char)(v >> 24); p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8); p[3] = (unsigned char)v;
}

/* the size of a str8/str32 or vbin8/vbin32 of n bytes */
static size_t variable_size(size_t n) { return n < 256 ? 2 + n : 5 + n; }

static unsigned char *put_variable(unsigned char *p, unsigned char code8, const char *data, size_t n) {
    if (n < 256) {
        *p++ = code8;
        *p++ = (unsigned char)n;
    } else {
        *p++ = (unsigned char)(code8 + 0x10);
        put_u32(p, n);
        p += 4;
    }
    memcpy(p, data, n);
    return p + n;
}

static PyObject *encode_plain(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 6)
        return PyErr_Format(PyExc_TypeError, "encode_plain takes 6 arguments (%zd given)", nargs);
    PyObject *head = args[0], *message_id = args[1], *fields = args[2], *body = args[5];
    if (!PyBytes_Check(head) || !PyBytes_Check(fields) || !PyUnicode_CheckExact(message_id))
        Py_RETURN_NONE;
    int overflow;
    long long timestamp = PyLong_AsLongLongAndOverflow(args[3], &overflow);
    long kind = PyLong_AsLong(args[4]);
    if (PyErr_Occurred()) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    if (overflow)
        Py_RETURN_NONE;
    Py_ssize_t id_len, body_len = 0;
    const char *id = PyUnicode_AsUTF8AndSize(message_id, &id_len);
    if (id == NULL) { /* (a lone surrogate: the Python path names it) */
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    const char *body_data = NULL;
    unsigned char body_code;
    static const unsigned char VALUE[3] = {0x00, 0x53, 0x77}, DATA[3] = {0x00, 0x53, 0x75};
    const unsigned char *section;
    if (kind == 5) { /* TEXT: str or None */
        section = VALUE;
        body_code = 0xA1;
        if (body != Py_None) {
            if (!PyUnicode_CheckExact(body)) /* (the exact types the Python path's rules name) */
                Py_RETURN_NONE;
            body_data = PyUnicode_AsUTF8AndSize(body, &body_len);
            if (body_data == NULL) {
                PyErr_Clear();
                Py_RETURN_NONE;
            }
        }
    } else if (kind == 3) { /* BYTES: bytes */
        if (!PyBytes_CheckExact(body))
            Py_RETURN_NONE;
        section = DATA;
        body_code = 0xA0;
        body_data = PyBytes_AS_STRING(body);
        body_len = PyBytes_GET_SIZE(body);
    } else {
        Py_RETURN_NONE;
    }
    size_t props_body = variable_size((size_t)id_len) + (size_t)PyBytes_GET_SIZE(fields) + 9;
    int small = props_body < 255; /* (and ten fields: the 8-bit list, as compound decides) */
    size_t list = small ? 3 + props_body : 9 + props_body;
    size_t body_size = body_data == NULL ? 1 : variable_size((size_t)body_len);
    size_t total = (size_t)PyBytes_GET_SIZE(head) + 3 + list + 3 + body_size;
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)total);
    if (out == NULL)
        return NULL;
    unsigned char *p = (unsigned char *)PyBytes_AS_STRING(out);
    memcpy(p, PyBytes_AS_STRING(head), (size_t)PyBytes_GET_SIZE(head));
    p += PyBytes_GET_SIZE(head);
    *p++ = 0x00; *p++ = 0x53; *p++ = 0x73; /* properties */
    if (small) {
        *p++ = 0xC0;
        *p++ = (unsigned char)(props_body + 1);
        *p++ = 10;
    } else {
        *p++ = 0xD0;
        put_u32(p, props_body + 4);
        put_u32(p + 4, 10);
        p += 8;
    }
    p = put_variable(p, 0xA1, id, (size_t)id_len);
    memcpy(p, PyBytes_AS_STRING(fields), (size_t)PyBytes_GET_SIZE(fields));
    p += PyBytes_GET_SIZE(fields);
    *p++ = 0x83; /* timestamp */
    unsigned long long t = (unsigned long long)timestamp;
    for (int i = 7; i >= 0; i--)
        *p++ = (unsigned char)(t >> (8 * i));
    memcpy(p, section, 3);
    p += 3;
    if (body_data == NULL)
        *p++ = 0x40; /* null */
    else
        p = put_variable(p, body_code, body_data, (size_t)body_len);
    return out;
}

static PyMethodDef methods[] = {
    {"encode_plain", (PyCFunction)(void (*)(void))encode_plain, METH_FASTCALL,
     "encode_plain(head, message_id, fields, timestamp, kind, body) -> bytes or None"},
    {"init", init, METH_VARARGS,
     "init(Sections, Header, Properties, UByte, UShort, UInt, ULong, Byte, Short, Int, Float, Timestamp, "
     "Symbol, uuid_from_bytes, python_decode_sections): bind the classes the decoder builds"},
    {"decode_sections", (PyCFunction)(void (*)(void))decode_sections, METH_FASTCALL | METH_KEYWORDS,
     "decode_sections(data, *, body=True) -> Sections (the Python twin for rare forms and errors)"},
    {"try_decode", try_decode, METH_VARARGS,
     "try_decode(data, body=True) -> Sections, or None where the C path gives up"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_csections", NULL, -1, methods};

PyMODINIT_FUNC PyInit__csections(void) {
    PyObject *uuid = PyImport_ImportModule("uuid");
    if (uuid == NULL)
        return NULL;
    UUIDT = (PyTypeObject *)PyObject_GetAttrString(uuid, "UUID");
    Py_DECREF(uuid);
    if (UUIDT == NULL)
        return NULL;
    symbols = PyDict_New();
    four = PyLong_FromLong(4);
    zero = PyLong_FromLong(0);
    s_data = PyUnicode_InternFromString("data");
    s_header = PyUnicode_InternFromString("header");
    s_da = PyUnicode_InternFromString("delivery_annotations");
    s_ma = PyUnicode_InternFromString("message_annotations");
    s_properties = PyUnicode_InternFromString("properties");
    s_ap = PyUnicode_InternFromString("application_properties");
    s_body_type = PyUnicode_InternFromString("body_type");
    s_body = PyUnicode_InternFromString("body");
    s_body_decoded = PyUnicode_InternFromString("body_decoded");
    s_footer = PyUnicode_InternFromString("footer");
    s_spans = PyUnicode_InternFromString("spans");
    s_body_kw = PyUnicode_InternFromString("body");
    if (!symbols || !four || !zero || !s_data || !s_header || !s_da || !s_ma || !s_properties || !s_ap
        || !s_body_type || !s_body || !s_body_decoded || !s_footer || !s_spans || !s_body_kw)
        return NULL;
    return PyModule_Create(&module);
}

/*
 * The XML of RFH2 folders and map/stream bodies, read in one pass (optional C accelerator of the
 * incoming MQ fast path, amqp_jms.mq._fastin).
 *
 * Why a parser of our own: the folders of one message are about 300 bytes of XML in ten to
 * twenty elements, and expat (through ElementTree) spends 9 us on them -- more than the whole
 * AMQP decode of the same message spends on its properties. This parser reads the shape RFH2
 * folders have -- one root holding elements that hold text -- and checks that text is
 * well-formed XML as it goes: names, attributes in either quote style, matching end tags, the
 * five predefined entities and character references (each must name an XML Char), no raw '<' or
 * '&', no "]]>", no control characters, valid UTF-8. It gives up (returns None) on anything
 * outside that shape -- comments, CDATA, processing instructions, DOCTYPEs, namespaces (a ':'
 * or an xmlns attribute), non-ASCII names, a carriage return (line-end normalisation), a
 * nested element, text in the root, attributes on the root -- and on anything malformed. The
 * caller then reads the message with ElementTree (expat), which reads it or names the
 * problem. So whatever this parser accepts, ElementTree reads the same way; the unit tests check
 * that against expat on generated and mutated folders (tests/unit/test_mq_accel_in.py).
 *
 * Every read is bounded by the buffer's end; no input can make it read out of bounds.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

typedef struct {
    const unsigned char *p;
    const unsigned char *end;
} Cur;

static inline int is_ws(unsigned char c) { return c == ' ' || c == '\t' || c == '\n'; }

static inline int is_name_start(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static inline int is_name_char(unsigned char c)
{
    return is_name_start(c) || (c >= '0' && c <= '9') || c == '-' || c == '.';
}

static inline void skip_ws(Cur *c)
{
    while (c->p < c->end && is_ws(*c->p))
        c->p++;
}

/* A name (ASCII, no ':') at the cursor: its start and length; 0 when there is none. */
static Py_ssize_t read_name(Cur *c, const unsigned char **start)
{
    const unsigned char *s = c->p;
    if (s >= c->end || !is_name_start(*s))
        return 0;
    s++;
    while (s < c->end && is_name_char(*s))
        s++;
    if (s < c->end && (*s == ':' || *s >= 0x80))
        return 0; /* a prefix or a non-ASCII name: not ours */
    *start = c->p;
    Py_ssize_t n = s - c->p;
    c->p = s;
    return n;
}

static inline int xml_char(unsigned long cp)
{
    return cp == 0x9 || cp == 0xA || cp == 0xD || (cp >= 0x20 && cp <= 0xD7FF) ||
           (cp >= 0xE000 && cp <= 0xFFFD) || (cp >= 0x10000 && cp <= 0x10FFFF);
}

/* Append code point cp as UTF-8 to out (room for 4 bytes is the caller's). */
static inline unsigned char *put_utf8(unsigned char *out, unsigned long cp)
{
    if (cp < 0x80) {
        *out++ = (unsigned char)cp;
    } else if (cp < 0x800) {
        *out++ = (unsigned char)(0xC0 | (cp >> 6));
        *out++ = (unsigned char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        *out++ = (unsigned char)(0xE0 | (cp >> 12));
        *out++ = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        *out++ = (unsigned char)(0x80 | (cp & 0x3F));
    } else {
        *out++ = (unsigned char)(0xF0 | (cp >> 18));
        *out++ = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
        *out++ = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        *out++ = (unsigned char)(0x80 | (cp & 0x3F));
    }
    return out;
}

/* The reference after '&' at s (s < end): its code point, the cursor moved past ';'. 0 when it
 * is not one of the five predefined entities or a character reference to an XML Char. */
static unsigned long read_reference(const unsigned char **sp, const unsigned char *end)
{
    const unsigned char *s = *sp;
    const unsigned char *semi = memchr(s, ';', (size_t)(end - s));
    if (semi == NULL || semi - s > 12)
        return 0;
    Py_ssize_t n = semi - s;
    unsigned long cp = 0;
    if (n >= 2 && s[0] == '#') {
        const unsigned char *d = s + 1;
        int hex = 0;
        if (*d == 'x') {
            hex = 1;
            d++;
        }
        if (d == semi)
            return 0;
        for (; d < semi; d++) {
            unsigned char ch = *d;
            unsigned long v;
            if (ch >= '0' && ch <= '9')
                v = ch - '0';
            else if (hex && ch >= 'a' && ch <= 'f')
                v = ch - 'a' + 10;
            else if (hex && ch >= 'A' && ch <= 'F')
                v = ch - 'A' + 10;
            else
                return 0;
            cp = cp * (hex ? 16 : 10) + v;
            if (cp > 0x10FFFF)
                return 0;
        }
        if (!xml_char(cp))
            return 0;
    } else if (n == 2 && s[0] == 'l' && s[1] == 't') {
        cp = '<';
    } else if (n == 2 && s[0] == 'g' && s[1] == 't') {
        cp = '>';
    } else if (n == 3 && memcmp(s, "amp", 3) == 0) {
        cp = '&';
    } else if (n == 4 && memcmp(s, "quot", 4) == 0) {
        cp = '"';
    } else if (n == 4 && memcmp(s, "apos", 4) == 0) {
        cp = '\'';
    } else {
        return 0;
    }
    *sp = semi + 1;
    return cp;
}

/* Raw bytes s..e (no '<') as a str: references resolved; in an attribute value (attr != 0)
 * tabs and newlines read as spaces, as XML's attribute-value normalisation says. NULL with no
 * exception set when the text is not well-formed; NULL with an exception on a memory error. */
static PyObject *decode_text(const unsigned char *s, const unsigned char *e, int attr)
{
    Py_ssize_t n = e - s;
    int plain = 1; /* ASCII with no reference, nothing to normalise */
    for (const unsigned char *q = s; q < e; q++) {
        unsigned char ch = *q;
        if (ch < 0x20) {
            if (ch != '\t' && ch != '\n')
                return NULL;
            if (attr)
                plain = 0;
        } else if (ch == '&' || ch >= 0x80) {
            plain = 0;
        } else if (ch == '>' && q - s >= 2 && q[-1] == ']' && q[-2] == ']' && !attr) {
            return NULL; /* "]]>" may not appear in content */
        }
    }
    if (plain) {
        PyObject *out = PyUnicode_New(n, 127);
        if (out != NULL)
            memcpy(PyUnicode_DATA(out), s, (size_t)n);
        return out;
    }
    /* a reference's UTF-8 (at most 4 bytes) is never longer than the reference (at least 4) */
    unsigned char stack[512];
    unsigned char *buf = n <= (Py_ssize_t)sizeof(stack) ? stack : PyMem_Malloc((size_t)n);
    if (buf == NULL)
        return PyErr_NoMemory();
    unsigned char *o = buf;
    const unsigned char *q = s;
    PyObject *out = NULL;
    while (q < e) {
        unsigned char ch = *q;
        if (ch == '&') {
            q++;
            unsigned long cp = read_reference(&q, e);
            if (cp == 0)
                goto done;
            o = put_utf8(o, cp);
        } else {
            if (ch >= 0x80 && ch == 0xEF && e - q >= 3 && q[1] == 0xBF && (q[2] == 0xBE || q[2] == 0xBF))
                goto done; /* U+FFFE / U+FFFF are not XML characters */
            *o++ = attr && (ch == '\t' || ch == '\n') ? ' ' : ch;
            q++;
        }
    }
    out = PyUnicode_DecodeUTF8((const char *)buf, o - buf, "strict");
    if (out == NULL && PyErr_ExceptionMatches(PyExc_UnicodeDecodeError))
        PyErr_Clear(); /* not UTF-8: not well-formed */
done:
    if (buf != stack)
        PyMem_Free(buf);
    return out;
}

/* Attributes up to '>' or '/>' into *attrs (NULL when there are none). Returns 1 on success, 0
 * when not ours/malformed, -1 on a Python error. */
static int read_attributes(Cur *c, PyObject **attrs)
{
    *attrs = NULL;
    for (;;) {
        const unsigned char *before = c->p;
        skip_ws(c);
        if (c->p >= c->end)
            return 0;
        if (*c->p == '>' || *c->p == '/')
            return 1;
        if (c->p == before)
            return 0; /* attributes are separated by white space */
        const unsigned char *name;
        Py_ssize_t nlen = read_name(c, &name);
        if (nlen == 0 || (nlen >= 5 && memcmp(name, "xmlns", 5) == 0))
            return 0;
        skip_ws(c);
        if (c->p >= c->end || *c->p != '=')
            return 0;
        c->p++;
        skip_ws(c);
        if (c->p >= c->end || (*c->p != '"' && *c->p != '\''))
            return 0;
        unsigned char quote = *c->p++;
        const unsigned char *vs = c->p;
        const unsigned char *ve = memchr(vs, quote, (size_t)(c->end - vs));
        if (ve == NULL || memchr(vs, '<', (size_t)(ve - vs)) != NULL)
            return 0;
        c->p = ve + 1;
        PyObject *value = decode_text(vs, ve, 1);
        if (value == NULL)
            return PyErr_Occurred() ? -1 : 0;
        PyObject *key = PyUnicode_FromStringAndSize((const char *)name, nlen);
        if (key == NULL) {
            Py_DECREF(value);
            return -1;
        }
        if (*attrs == NULL) {
            *attrs = PyDict_New();
            if (*attrs == NULL) {
                Py_DECREF(key);
                Py_DECREF(value);
                return -1;
            }
        }
        int dup = PyDict_Contains(*attrs, key);
        int err = dup == 0 ? PyDict_SetItem(*attrs, key, value) : 0;
        Py_DECREF(key);
        Py_DECREF(value);
        if (dup != 0 || err < 0)
            return dup == 1 ? 0 : -1; /* a repeated attribute is not well-formed */
    }
}

/* "</name" + ws? + ">" at the cursor, for the start tag's name. */
static int read_end_tag(Cur *c, const unsigned char *name, Py_ssize_t nlen)
{
    if (c->end - c->p < nlen + 3 || c->p[0] != '<' || c->p[1] != '/' ||
        memcmp(c->p + 2, name, (size_t)nlen) != 0)
        return 0;
    c->p += 2 + nlen;
    skip_ws(c);
    if (c->p >= c->end || *c->p != '>')
        return 0;
    c->p++;
    return 1;
}

/* Tag names repeat (a jms folder uses the same dozen, a usr folder a producer's few): the str of
 * a name read recently is reused rather than built again. A small direct-mapped table of names;
 * a collision just replaces the entry. */
#define NAME_SLOTS 128
static PyObject *name_slots[NAME_SLOTS];

static PyObject *name_str(const unsigned char *name, Py_ssize_t nlen)
{
    size_t h = ((size_t)nlen * 31u + (size_t)name[0] * 7u + (size_t)name[nlen - 1] * 3u +
                (size_t)name[nlen / 2]) % NAME_SLOTS;
    PyObject *s = name_slots[h];
    if (s != NULL && PyUnicode_GET_LENGTH(s) == nlen && memcmp(PyUnicode_DATA(s), name, (size_t)nlen) == 0) {
        Py_INCREF(s);
        return s;
    }
    s = PyUnicode_New(nlen, 127);
    if (s == NULL)
        return NULL;
    memcpy(PyUnicode_DATA(s), name, (size_t)nlen);
    if (nlen <= 64) {
        Py_INCREF(s);
        Py_XSETREF(name_slots[h], s);
    }
    return s;
}

/* One document "<root>(ws|<child attrs>text</child>|<child/>)*</root>" with optional white
 * space around it. Returns (root name, [(name, text or None, attrs dict or None), ...]) or None
 * (Py_None, new reference) when it is not of that shape or not well-formed; NULL on error. */
static PyObject *parse_doc(const unsigned char *s, Py_ssize_t n)
{
    Cur c = {s, s + n};
    if (memchr(s, '\r', (size_t)n) != NULL)
        Py_RETURN_NONE;
    skip_ws(&c);
    if (c.p >= c.end || *c.p != '<')
        Py_RETURN_NONE;
    c.p++;
    const unsigned char *root;
    Py_ssize_t rlen = read_name(&c, &root);
    if (rlen == 0 || c.p >= c.end || *c.p != '>')
        Py_RETURN_NONE; /* attributes on the root, or "<root/>": the general path */
    c.p++;
    PyObject *children = PyList_New(0);
    if (children == NULL)
        return NULL;
    for (;;) {
        skip_ws(&c);
        if (c.p >= c.end || *c.p != '<')
            goto not_ours; /* text in the root, or the end of input */
        if (c.end - c.p >= 2 && c.p[1] == '/')
            break;
        c.p++;
        const unsigned char *name;
        Py_ssize_t nlen = read_name(&c, &name);
        if (nlen == 0)
            goto not_ours;
        PyObject *attrs;
        int ok = read_attributes(&c, &attrs);
        if (ok <= 0) {
            if (ok < 0)
                goto error;
            goto not_ours;
        }
        PyObject *text = NULL;
        if (*c.p == '/') {
            if (c.end - c.p < 2 || c.p[1] != '>') {
                Py_XDECREF(attrs);
                goto not_ours;
            }
            c.p += 2;
        } else {
            c.p++; /* '>' */
            const unsigned char *ts = c.p;
            const unsigned char *te = memchr(ts, '<', (size_t)(c.end - ts));
            if (te == NULL) {
                Py_XDECREF(attrs);
                goto not_ours;
            }
            c.p = te;
            if (!read_end_tag(&c, name, nlen)) {
                Py_XDECREF(attrs);
                goto not_ours; /* a nested element, comment, CDATA, PI or a mismatched end */
            }
            if (te > ts) {
                text = decode_text(ts, te, 0);
                if (text == NULL) {
                    Py_XDECREF(attrs);
                    if (PyErr_Occurred())
                        goto error;
                    goto not_ours;
                }
            }
        }
        PyObject *tag = name_str(name, nlen);
        if (tag == NULL) {
            Py_XDECREF(attrs);
            Py_XDECREF(text);
            goto error;
        }
        PyObject *child = PyTuple_New(3);
        if (child == NULL) {
            Py_DECREF(tag);
            Py_XDECREF(attrs);
            Py_XDECREF(text);
            goto error;
        }
        PyTuple_SET_ITEM(child, 0, tag);
        if (text == NULL) {
            Py_INCREF(Py_None);
            text = Py_None;
        }
        PyTuple_SET_ITEM(child, 1, text);
        if (attrs == NULL) {
            Py_INCREF(Py_None);
            attrs = Py_None;
        }
        PyTuple_SET_ITEM(child, 2, attrs);
        int err = PyList_Append(children, child);
        Py_DECREF(child);
        if (err < 0)
            goto error;
    }
    if (!read_end_tag(&c, root, rlen))
        goto not_ours;
    skip_ws(&c);
    if (c.p != c.end)
        goto not_ours; /* anything after the root */
    PyObject *tag = name_str(root, rlen);
    if (tag == NULL)
        goto error;
    PyObject *out = PyTuple_New(2);
    if (out == NULL) {
        Py_DECREF(tag);
        goto error;
    }
    PyTuple_SET_ITEM(out, 0, tag);
    PyTuple_SET_ITEM(out, 1, children);
    return out;
not_ours:
    Py_DECREF(children);
    Py_RETURN_NONE;
error:
    Py_DECREF(children);
    return NULL;
}

static PyObject *parse(PyObject *self, PyObject *arg)
{
    (void)self;
    if (PyBytes_Check(arg))
        return parse_doc((const unsigned char *)PyBytes_AS_STRING(arg), PyBytes_GET_SIZE(arg));
    if (PyUnicode_Check(arg)) {
        Py_ssize_t n;
        const char *s = PyUnicode_AsUTF8AndSize(arg, &n);
        if (s == NULL) {
            if (!PyErr_ExceptionMatches(PyExc_UnicodeEncodeError))
                return NULL;
            PyErr_Clear(); /* lone surrogates: not XML */
            Py_RETURN_NONE;
        }
        return parse_doc((const unsigned char *)s, n);
    }
    PyErr_SetString(PyExc_TypeError, "parse() takes bytes or str");
    return NULL;
}

static inline long read_i32(const unsigned char *p, int little)
{
    uint32_t v = little ? (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24
                        : (uint32_t)p[3] | (uint32_t)p[2] << 8 | (uint32_t)p[1] << 16 | (uint32_t)p[0] << 24;
    return (long)(int32_t)v;
}

/* The NameValueLength/NameValueData pairs of one RFH2 (raw[pos:end]), for the incoming fast
 * path's shape: folders mcd and jms, optionally usr and ajms, each at most once, plus empty
 * ones. Returns (mcd bytes as sent, jms children by name -- the first of a name wins --, usr
 * children or None, ajms children or None), or None for any other shape or bad XML. */
static PyObject *folders(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer buf;
    Py_ssize_t pos, end;
    int little;
    if (!PyArg_ParseTuple(args, "y*nnp:folders", &buf, &pos, &end, &little))
        return NULL;
    PyObject *mcd = NULL, *jms = NULL, *usr = NULL, *ajms = NULL, *out = NULL;
    const unsigned char *raw = buf.buf;
    if (pos < 0 || end > buf.len || pos > end)
        goto not_ours;
    while (pos < end) {
        if (end - pos < 4)
            goto not_ours;
        long n = read_i32(raw + pos, little);
        pos += 4;
        if (n < 0 || n > end - pos)
            goto not_ours;
        const unsigned char *f = raw + pos;
        Py_ssize_t flen = n, slen = n;
        pos += n;
        while (slen > 0 && (f[slen - 1] == ' ' || f[slen - 1] == '\0'))
            slen--;
        if (slen == 0)
            continue;
        PyObject **slot;
        if (flen >= 5 && memcmp(f, "<mcd>", 5) == 0 && mcd == NULL) {
            mcd = PyBytes_FromStringAndSize((const char *)f, flen);
            if (mcd == NULL)
                goto error;
            continue;
        } else if (flen >= 5 && memcmp(f, "<jms>", 5) == 0) {
            slot = &jms;
        } else if (flen >= 5 && memcmp(f, "<usr>", 5) == 0) {
            slot = &usr;
        } else if (flen >= 6 && memcmp(f, "<ajms>", 6) == 0) {
            slot = &ajms;
        } else {
            goto not_ours; /* another folder, or mcd repeated */
        }
        if (*slot != NULL)
            goto not_ours; /* repeated */
        PyObject *doc = parse_doc(f, slen);
        if (doc == NULL)
            goto error;
        if (doc == Py_None) {
            Py_DECREF(doc);
            goto not_ours;
        }
        *slot = PyTuple_GET_ITEM(doc, 1);
        Py_INCREF(*slot);
        Py_DECREF(doc);
    }
    if (mcd == NULL || jms == NULL)
        goto not_ours;
    {
        /* jms children by name, the first of a name winning */
        PyObject *byname = PyDict_New();
        if (byname == NULL)
            goto error;
        Py_ssize_t k = PyList_GET_SIZE(jms);
        for (Py_ssize_t i = k - 1; i >= 0; i--) {
            PyObject *child = PyList_GET_ITEM(jms, i);
            if (PyDict_SetItem(byname, PyTuple_GET_ITEM(child, 0), child) < 0) {
                Py_DECREF(byname);
                goto error;
            }
        }
        Py_SETREF(jms, byname);
    }
    out = PyTuple_Pack(4, mcd, jms, usr ? usr : Py_None, ajms ? ajms : Py_None);
    goto finish;
not_ours:
    out = Py_None;
    Py_INCREF(out);
    goto finish;
error:
    out = NULL;
finish:
    Py_XDECREF(mcd);
    Py_XDECREF(jms);
    Py_XDECREF(usr);
    Py_XDECREF(ajms);
    PyBuffer_Release(&buf);
    return out;
}

static PyMethodDef methods[] = {
    {"parse", parse, METH_O,
     "parse(data: bytes | str) -> (root, [(name, text, attrs)]) | None: one flat XML document."},
    {"folders", folders, METH_VARARGS,
     "folders(raw, pos, end, little) -> (mcd, jms, usr, ajms) | None: one RFH2's folders."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_mqxml",
    "The XML of RFH2 folders and map/stream bodies in one pass (see _mqxml.c).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__mqxml(void)
{
    return PyModule_Create(&module);
}

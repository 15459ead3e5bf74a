#!/usr/bin/env python3
"""ovmf_vars_enroll_db.py IN.fd CERT.cer OUT.fd - a copy of an OVMF variable
store (e.g. /usr/share/OVMF/OVMF_VARS_4M.snakeoil.fd) whose Secure Boot `db`
also trusts CERT (DER): what a user does in a PC's setup screens ("append a
key to db"), done to QEMU's firmware file for the tests.

The store (edk2's authenticated variable format) is a list of variables,
each a header, a UTF-16 name and data; a variable is changed the way the
firmware changes one: the old `db` is marked deleted and a new `db` (the old
signature lists plus one EFI_CERT_X509 list with CERT) is written into the
free space after the last variable. Fails with a reason if anything in the
file is not as expected; never writes IN.
"""
import struct
import sys
import uuid

FV_SIGNATURE = b"_FVH"
AUTH_STORE_GUID = uuid.UUID("aaf32c78-947b-439a-a180-2e144ec37792")
DB_GUID = uuid.UUID("d719b2cb-3d3a-4596-a3bc-dad00e67656f")  # EFI_IMAGE_SECURITY_DATABASE_GUID
X509_GUID = uuid.UUID("a5c059a1-94e4-4aa7-87b5-ab155c2bf072")  # EFI_CERT_X509_GUID
OWNER_GUID = uuid.UUID("4c4c4d4b-0000-4000-8000-6f776e65722e")  # ours: "LLMK...owner."
START_ID = 0x55AA
VAR_ADDED, VAR_DELETED = 0x3F, 0xFD
# StartId, State, Reserved, Attributes, MonotonicCount, TimeStamp, PubKeyIndex, NameSize, DataSize, VendorGuid
HEADER = struct.Struct("<HBBIQ16sIII16s")


def fail(why):
    sys.exit(f"ovmf_vars_enroll_db: {why}")


def align4(n):
    return (n + 3) & ~3


def x509_signature_list(der):
    """EFI_SIGNATURE_LIST holding one EFI_SIGNATURE_DATA: owner GUID + cert."""
    sig_size = 16 + len(der)
    return X509_GUID.bytes_le + struct.pack("<III", 28 + sig_size, 0, sig_size) + OWNER_GUID.bytes_le + der


def enroll(store, der):
    if store[40:44] != FV_SIGNATURE:
        fail("not a firmware volume (no _FVH signature)")
    fv_header_len = struct.unpack_from("<H", store, 48)[0]
    if uuid.UUID(bytes_le=bytes(store[fv_header_len:fv_header_len + 16])) != AUTH_STORE_GUID:
        fail("no authenticated variable store after the volume header")
    store_size = struct.unpack_from("<I", store, fv_header_len + 16)[0]
    end = fv_header_len + store_size
    offset = align4(fv_header_len + 28)
    db_at = None
    while offset + HEADER.size <= end:
        fields = HEADER.unpack_from(store, offset)
        start_id, state, name_size, data_size = fields[0], fields[1], fields[7], fields[8]
        if start_id != START_ID:
            break
        name = bytes(store[offset + HEADER.size:offset + HEADER.size + name_size]).decode("utf-16-le")
        if state == VAR_ADDED and name == "db\0" and uuid.UUID(bytes_le=fields[9]) == DB_GUID:
            db_at = offset
        offset = align4(offset + HEADER.size + name_size + data_size)
    if db_at is None:
        fail("the store has no db variable (Secure Boot keys not enrolled)")
    if any(b != 0xFF for b in store[offset:end]):
        fail("the space after the last variable is not free")
    fields = list(HEADER.unpack_from(store, db_at))
    name_size, data_size = fields[7], fields[8]
    data_at = db_at + HEADER.size + name_size
    data = bytes(store[data_at:data_at + data_size]) + x509_signature_list(der)
    name = bytes(store[db_at + HEADER.size:data_at])
    fields[8] = len(data)
    record = HEADER.pack(*fields) + name + data
    if offset + len(record) > end:
        fail(f"no room for the new db ({len(record)} bytes, {end - offset} free)")
    store[offset:offset + len(record)] = record
    store[db_at + 2] = VAR_ADDED & VAR_DELETED  # the old db: deleted, as the firmware marks it


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: ovmf_vars_enroll_db.py IN.fd CERT.cer OUT.fd")
    with open(sys.argv[1], "rb") as f:
        store = bytearray(f.read())
    with open(sys.argv[2], "rb") as f:
        der = f.read()
    if not der.startswith(b"\x30\x82"):
        fail(f"{sys.argv[2]} is not a DER certificate (make keys writes llmk-owner.cer)")
    enroll(store, der)
    with open(sys.argv[3], "wb") as f:
        f.write(store)


if __name__ == "__main__":
    main()

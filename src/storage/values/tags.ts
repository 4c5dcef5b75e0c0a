/**
 * The first byte of every stored value names the codec that wrote it, so values written by either
 * codec stay readable whichever codec is the default today.
 *
 * @packageDocumentation
 */

/**
 * First byte of a value written by the V8 codec: V8's serialization header (`FF 0F` = version 15),
 * the same bytes workerd stores. Only V8 writes this byte first.
 */
export const V8_CODEC_TAG = 0xff;

/**
 * First byte of a value written by the portable "structured" codec (format version 1).
 *
 * Chosen as `0x01` because it is neither V8's header byte nor a V8 serialization tag (V8 tags are
 * printable ASCII or `0x00` padding), so it can never be confused with workerd's headerless legacy
 * (version 13) values either. A future incompatible format takes the next free byte.
 */
export const STRUCTURED_CODEC_TAG = 0x01;

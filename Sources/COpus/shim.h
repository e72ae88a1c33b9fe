// Ogg Opus: libopusenc writes it, libopusfile reads it.
#include <opusenc.h>
#include <opusfile.h>

// ope_encoder_ctl is variadic and its requests are macros: set up a voice note here.
static inline int rchat_ope_voice(OggOpusEnc *encoder, opus_int32 bitrate) {
    int status = ope_encoder_ctl(encoder, OPUS_SET_SIGNAL(OPUS_SIGNAL_VOICE));
    if (status != OPE_OK) return status;
    return ope_encoder_ctl(encoder, OPUS_SET_BITRATE(bitrate));
}

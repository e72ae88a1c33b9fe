// The NATS C client (libnats): the relay's cluster mode keeps mailboxes in JetStream.
#include <nats/nats.h>

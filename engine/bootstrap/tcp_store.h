// The TCP rendezvous store: its server (tcp_store_server.h, hosted by the
// local launcher or by rank 0) and the client every rank uses
// (tcp_store_client.h). Protocol: store_protocol.h, docs/wire-format.md.
#pragma once

#include "engine/bootstrap/tcp_store_client.h"
#include "engine/bootstrap/tcp_store_server.h"

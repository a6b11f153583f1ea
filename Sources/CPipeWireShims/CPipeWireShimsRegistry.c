// The registry's view of nodes: one node watched (does it exist, did it go), and every node listed once (what
// `--audio NODE` and the PipeWire tests pick from).
#include "CPipeWireShims.h"

#include <stdlib.h>
#include <string.h>

struct CPipeWireShims_NodeWatch {
    struct pw_core *core;
    struct pw_registry *registry;
    struct spa_hook registryListener;
    struct spa_hook coreListener;
    uint32_t nodeID;
    int syncSequence;
    enum CPipeWireShims_NodeState state;
    int coreError;
};

static void nodeWatchGlobal(void *data, uint32_t id, uint32_t permissions, const char *type, uint32_t version,
                            const struct spa_dict *props) {
    struct CPipeWireShims_NodeWatch *watch = data;
    if (id == watch->nodeID && strcmp(type, PW_TYPE_INTERFACE_Node) == 0) watch->state = CPipeWireShims_NodePresent;
}

static void nodeWatchGlobalRemove(void *data, uint32_t id) {
    struct CPipeWireShims_NodeWatch *watch = data;
    if (id == watch->nodeID && watch->state == CPipeWireShims_NodePresent) watch->state = CPipeWireShims_NodeRemoved;
}

static void nodeWatchDone(void *data, uint32_t id, int seq) {
    struct CPipeWireShims_NodeWatch *watch = data;
    if (id == PW_ID_CORE && seq == watch->syncSequence && watch->state == CPipeWireShims_NodeUnknown)
        watch->state = CPipeWireShims_NodeAbsent;
}

static void nodeWatchError(void *data, uint32_t id, int seq, int res, const char *message) {
    struct CPipeWireShims_NodeWatch *watch = data;
    if (id == PW_ID_CORE) watch->coreError = res < 0 ? res : -EIO;
}

static const struct pw_registry_events nodeWatchRegistryEvents = {
    PW_VERSION_REGISTRY_EVENTS,
    .global = nodeWatchGlobal,
    .global_remove = nodeWatchGlobalRemove,
};

static const struct pw_core_events nodeWatchCoreEvents = {
    PW_VERSION_CORE_EVENTS,
    .done = nodeWatchDone,
    .error = nodeWatchError,
};

struct CPipeWireShims_NodeWatch *CPipeWireShims_watchNode(struct pw_core *core, uint32_t nodeID) {
    struct CPipeWireShims_NodeWatch *watch = calloc(1, sizeof *watch);
    if (watch == NULL) return NULL;
    watch->core = core;
    watch->nodeID = nodeID;
    watch->registry = pw_core_get_registry(core, PW_VERSION_REGISTRY, 0);
    if (watch->registry == NULL) {
        free(watch);
        return NULL;
    }
    pw_registry_add_listener(watch->registry, &watch->registryListener, &nodeWatchRegistryEvents, watch);
    pw_core_add_listener(core, &watch->coreListener, &nodeWatchCoreEvents, watch);
    // Answered after the registry has sent every existing global.
    watch->syncSequence = pw_core_sync(core, PW_ID_CORE, 0);
    return watch;
}

enum CPipeWireShims_NodeState CPipeWireShims_nodeState(const struct CPipeWireShims_NodeWatch *watch) {
    return watch->state;
}

int CPipeWireShims_coreError(const struct CPipeWireShims_NodeWatch *watch) { return watch->coreError; }

void CPipeWireShims_unwatchNode(struct CPipeWireShims_NodeWatch *watch) {
    if (watch == NULL) return;
    spa_hook_remove(&watch->coreListener);
    spa_hook_remove(&watch->registryListener);
    pw_proxy_destroy((struct pw_proxy *)watch->registry);
    free(watch);
}

struct CPipeWireShims_NodeList {
    struct pw_registry *registry;
    struct spa_hook registryListener;
    struct spa_hook coreListener;
    int syncSequence;
    bool complete;
    struct CPipeWireShims_NodeListEntry *entries;
    int count;
    int capacity;
};

static char *copyProperty(const struct spa_dict *props, const char *key) {
    const char *value = props ? spa_dict_lookup(props, key) : NULL;
    return value ? strdup(value) : NULL;
}

static void nodeListGlobal(void *data, uint32_t id, uint32_t permissions, const char *type, uint32_t version,
                           const struct spa_dict *props) {
    struct CPipeWireShims_NodeList *list = data;
    if (strcmp(type, PW_TYPE_INTERFACE_Node) != 0) return;
    if (list->count == list->capacity) {
        int capacity = list->capacity ? list->capacity * 2 : 32;
        struct CPipeWireShims_NodeListEntry *grown = realloc(list->entries, (size_t)capacity * sizeof *grown);
        if (grown == NULL) return;
        list->entries = grown;
        list->capacity = capacity;
    }
    const char *serial = props ? spa_dict_lookup(props, PW_KEY_OBJECT_SERIAL) : NULL;
    list->entries[list->count++] = (struct CPipeWireShims_NodeListEntry){
        .id = id,
        .serial = serial ? strtoull(serial, NULL, 10) : UINT64_MAX,
        .name = copyProperty(props, PW_KEY_NODE_NAME),
        .mediaClass = copyProperty(props, PW_KEY_MEDIA_CLASS),
    };
}

static void nodeListDone(void *data, uint32_t id, int seq) {
    struct CPipeWireShims_NodeList *list = data;
    if (id == PW_ID_CORE && seq == list->syncSequence) list->complete = true;
}

static const struct pw_registry_events nodeListRegistryEvents = {
    PW_VERSION_REGISTRY_EVENTS,
    .global = nodeListGlobal,
};

static const struct pw_core_events nodeListCoreEvents = {
    PW_VERSION_CORE_EVENTS,
    .done = nodeListDone,
};

struct CPipeWireShims_NodeList *CPipeWireShims_listNodes(struct pw_core *core) {
    struct CPipeWireShims_NodeList *list = calloc(1, sizeof *list);
    if (list == NULL) return NULL;
    list->registry = pw_core_get_registry(core, PW_VERSION_REGISTRY, 0);
    if (list->registry == NULL) {
        free(list);
        return NULL;
    }
    pw_registry_add_listener(list->registry, &list->registryListener, &nodeListRegistryEvents, list);
    pw_core_add_listener(core, &list->coreListener, &nodeListCoreEvents, list);
    list->syncSequence = pw_core_sync(core, PW_ID_CORE, 0);
    return list;
}

bool CPipeWireShims_nodeListComplete(const struct CPipeWireShims_NodeList *list) { return list->complete; }

int CPipeWireShims_nodeListCount(const struct CPipeWireShims_NodeList *list) { return list->count; }

struct CPipeWireShims_NodeListEntry CPipeWireShims_nodeListEntry(const struct CPipeWireShims_NodeList *list, int index) {
    return list->entries[index];
}

void CPipeWireShims_freeNodeList(struct CPipeWireShims_NodeList *list) {
    if (list == NULL) return;
    spa_hook_remove(&list->coreListener);
    spa_hook_remove(&list->registryListener);
    pw_proxy_destroy((struct pw_proxy *)list->registry);
    for (int index = 0; index < list->count; index++) {
        free((char *)list->entries[index].name);
        free((char *)list->entries[index].mediaClass);
    }
    free(list->entries);
    free(list);
}

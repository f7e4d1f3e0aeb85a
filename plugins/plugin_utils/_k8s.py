# -*- coding: utf-8 -*-
# Copyright: (c) 2026, nodeops.numa_drift contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubernetes API access for the collection's controller-side action plugins.

Uses kubernetes.core's own client factory (same authentication as its modules: kubeconfig,
context, ``K8S_AUTH_*``), imported when first needed so that nothing here is required unless a
plugin talks to the API. Failures become ``ApiFailure`` with the server's message; a client that cannot be set up
names the kubeconfig file and the role's variables that choose it (``_k8s_setup``).
"""

from __future__ import annotations

import json
from typing import Any, Callable, Dict, Mapping, Optional, Tuple

from ansible_collections.nodeops.numa_drift.plugins.plugin_utils._action import call_within
from ansible_collections.nodeops.numa_drift.plugins.plugin_utils._k8s_setup import kubeconfig_failure

CONFLICT_RETRIES = 5


class ApiFailure(Exception):
    """An API call failed; ``status`` is the HTTP status (0 when the server was not reached)."""

    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


def _is_config_error(error: BaseException) -> bool:
    """Whether the Kubernetes client refused its configuration (kubeconfig, context, in-cluster), not the server."""
    try:
        from kubernetes.config import ConfigException  # pylint: disable=import-outside-toplevel
    except ImportError:  # pragma: no cover - get_api_client needs it
        return True
    seen: Optional[BaseException] = error
    while seen is not None:
        if isinstance(seen, ConfigException):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _describe(error: Exception) -> ApiFailure:
    status = int(getattr(error, "status", 0) or 0)
    body = getattr(error, "body", None)
    message = str(error)
    if body:
        try:
            message = json.loads(body if isinstance(body, str) else body.decode("utf-8")).get("message") or message
        except (ValueError, AttributeError, UnicodeDecodeError):
            message = str(body)
    return ApiFailure(("%s (HTTP %d)" % (message, status)) if status else message.splitlines()[0] if message else repr(error), status)


class Api:
    """A few verbs on a few kinds, with kubernetes.core's client."""

    def __init__(self, kubeconfig: Optional[str] = None, context: Optional[str] = None) -> None:
        try:
            from ansible_collections.kubernetes.core.plugins.module_utils.k8s.client import get_api_client  # pylint: disable=import-outside-toplevel
        except ImportError as error:  # pragma: no cover - depends on the controller
            raise ApiFailure("the kubernetes.core collection and the kubernetes Python client are needed on the controller: %s" % error)
        auth = {key: value for key, value in (("kubeconfig", kubeconfig), ("context", context)) if value}
        try:
            self.client = get_api_client(**auth)
        except Exception as error:  # pylint: disable=broad-except  # any config problem, with its message
            raise ApiFailure(kubeconfig_failure(kubeconfig, context, str(error), config_error=_is_config_error(error)))
        self._resources: Dict[str, Any] = {}

    def _resource(self, api_version: str, kind: str) -> Any:
        key = api_version + "/" + kind
        if key not in self._resources:
            self._resources[key] = self._call(lambda: self.client.resource(kind, api_version))
        return self._resources[key]

    @staticmethod
    def _call(function: Callable[[], Any]) -> Any:
        try:
            return function()
        except Exception as error:  # pylint: disable=broad-except  # HTTP, connection and discovery errors alike
            raise _describe(error)

    def get(self, api_version: str, kind: str, name: str, namespace: Optional[str] = None) -> Optional[Dict[str, Any]]:
        """The object, or None when it does not exist."""
        resource = self._resource(api_version, kind)
        try:
            return self._call(lambda: resource.get(name=name, namespace=namespace).to_dict())
        except ApiFailure as failure:
            if failure.status == 404:
                return None
            raise

    def list(self, api_version: str, kind: str, namespace: Optional[str] = None, **params: Any) -> Dict[str, Any]:
        resource = self._resource(api_version, kind)
        return self._call(lambda: resource.get(namespace=namespace, **params).to_dict())

    def create(self, api_version: str, kind: str, body: Mapping[str, Any], namespace: Optional[str] = None) -> Dict[str, Any]:
        resource = self._resource(api_version, kind)
        return self._call(lambda: resource.create(body=dict(body), namespace=namespace).to_dict())

    def replace(self, api_version: str, kind: str, body: Mapping[str, Any], namespace: Optional[str] = None) -> Dict[str, Any]:
        """PUT with the body's resourceVersion: a 409 means someone else wrote first."""
        resource = self._resource(api_version, kind)
        return self._call(lambda: resource.replace(body=dict(body), namespace=namespace).to_dict())

    def merge_patch(self, api_version: str, kind: str, name: str, patch: Mapping[str, Any], namespace: Optional[str] = None) -> Dict[str, Any]:
        resource = self._resource(api_version, kind)
        return self._call(lambda: resource.patch(body=dict(patch), name=name, namespace=namespace,
                                                 content_type="application/merge-patch+json").to_dict())

    def delete(self, api_version: str, kind: str, name: str, namespace: Optional[str] = None) -> None:
        resource = self._resource(api_version, kind)
        try:
            self._call(lambda: resource.delete(name=name, namespace=namespace))
        except ApiFailure as failure:
            if failure.status != 404:
                raise


def nodes_within(seconds: float, kubeconfig: Optional[str], context: Optional[str]) -> Tuple[Optional[Dict[str, Dict[str, Any]]], str]:
    """The cluster's Nodes by name from one list that may take at most ``seconds`` (the client has no timeout of its own:
    a black-holed API must not stall the run), or (None, why not)."""
    def list_nodes() -> Any:
        try:
            items = Api(kubeconfig, context).list("v1", "Node").get("items") or []
        except ApiFailure as failure:
            return str(failure)
        return {str((item.get("metadata") or {}).get("name")): item for item in items if isinstance(item, Mapping)}

    finished, value = call_within(seconds, list_nodes, "node list")
    if not finished:
        return None, "the API did not answer within %g s" % seconds
    if isinstance(value, dict):
        return value, ""
    return None, str(value)

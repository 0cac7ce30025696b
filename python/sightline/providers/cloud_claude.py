"""Claude on AWS Bedrock (`bedrock`) and Google Vertex AI (`vertex`): the anthropic
provider's requests and replies (providers/anthropic_api.py) through the anthropic SDK's
AnthropicBedrock and AnthropicVertex clients, signed by each cloud's own SDK.

Bedrock: SigV4 with boto3's credential chain (the `sightline[bedrock]` extra). The core took
$AWS_SECRET_ACCESS_KEY, $AWS_SESSION_TOKEN and $AWS_BEARER_TOKEN_BEDROCK out of its
environment (domain/secrets.py), so they are passed explicitly; a profile ($AWS_PROFILE,
~/.aws), SSO or an instance role is boto3's to find. Region: provider.region, else
$AWS_REGION / $AWS_DEFAULT_REGION, else the profile's.

Vertex: Google application default credentials (the `sightline[vertex]` extra):
$GOOGLE_APPLICATION_CREDENTIALS, gcloud's `application-default login`, or the metadata
server. Project: provider.project, else $ANTHROPIC_VERTEX_PROJECT_ID, else the
credentials'. Region: provider.region, else $CLOUD_ML_REGION.

Every key, session token and access token is registered with the redactor before a request
carries it. A missing extra is said as the pip command that brings it, on the first send
(importing boto3 at setup() would also cost a second).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sightline.domain import secrets
from sightline.domain.presets import PRESETS
from sightline.providers.anthropic_api import (
    AnthropicProvider,
    _abortable_http_client,
    classify,
)
from sightline.providers.base import ProviderError, address_origin

# What each cloud's client needs beyond the core: (module, pip distribution).
NEEDS: dict[str, tuple[tuple[str, str], ...]] = {
    "bedrock": (("boto3", "boto3"), ("botocore", "botocore")),
    "vertex": (("google.auth", "google-auth"), ("requests", "requests")),
}


def missing_extra(kind: str) -> str | None:
    """The sentence that says which extra to install, when a module of it is missing."""
    for module, dist in NEEDS.get(kind, ()):
        try:
            importlib.import_module(module)
        except ImportError:
            return (
                f"The {kind} provider needs {dist}, which is not installed: "
                f"pip install 'sightline[{kind}]' (into the Python sightline runs)."
            )
    return None


def aws_region(region: str | None) -> str | None:
    return region or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")


def aws_credentials() -> tuple[dict[str, Any], str]:
    """The AnthropicBedrock credential arguments and where they come from (never a value)."""
    token = secrets.env_secret("AWS_BEARER_TOKEN_BEDROCK")
    if token:
        secrets.register(token)
        return {"api_key": token}, "$AWS_BEARER_TOKEN_BEDROCK (a Bedrock API key)"
    secret = secrets.env_secret("AWS_SECRET_ACCESS_KEY")
    if secret:
        session = secrets.env_secret("AWS_SESSION_TOKEN")
        secrets.register(secret)
        secrets.register(session)
        return {
            "aws_access_key": os.environ.get("AWS_ACCESS_KEY_ID"),
            "aws_secret_key": secret,
            "aws_session_token": session,
        }, "$AWS_ACCESS_KEY_ID and $AWS_SECRET_ACCESS_KEY"
    profile = os.environ.get("AWS_PROFILE")
    where = f"the AWS profile {profile!r}" if profile else "boto3's credential chain (~/.aws)"
    return {"aws_profile": profile}, where


def bedrock_fault(status: int, detail: str, region: str) -> str | None:
    """Bedrock's own faults, in the user's words with what to do (else None)."""
    low = detail.lower()
    if "on-demand throughput" in low or "inference profile" in low:
        return (
            "Bedrock refused the model id (400): this model is called through an inference "
            "profile; set provider.model to its profile id (e.g. us.anthropic.…)."
        )
    if status == 403 and ("access to the model" in low or "not authorized" in low):
        return (
            f"No access to this model in {region} (403): enable it under Bedrock → Model "
            "access in the AWS console for this region, or set provider.region to one where "
            "it is enabled."
        )
    if status == 403 and ("security token" in low or "signature" in low):
        return (
            "AWS refused the credentials (403): check $AWS_ACCESS_KEY_ID / "
            "$AWS_SECRET_ACCESS_KEY or the profile (aws sso login when it expired)."
        )
    return None


def vertex_fault(status: int, detail: str, region: str) -> str | None:
    low = detail.lower()
    if status == 404 and ("not found" in low or "publisher model" in low or not detail):
        return (
            f"Vertex AI has no such Claude model in {region} (404): enable it in the Model "
            "Garden for this project, or set provider.region to a region that serves it."
        )
    if status == 403:
        return (
            "Vertex AI denied the request (403): the credentials need the role "
            "'Vertex AI User' on the project, and the Vertex AI API must be enabled."
        )
    if status == 401:
        return (
            "Google refused the credentials (401): run gcloud auth application-default "
            "login, or check $GOOGLE_APPLICATION_CREDENTIALS."
        )
    if status == 429 and ("quota" in low or "resource exhausted" in low or not detail):
        return (
            "Vertex AI quota exceeded (429): wait a moment and send again, or ask for more "
            "quota for this model in the project's Quotas page."
        )
    return None


@dataclass
class CloudClaudeProvider(AnthropicProvider):
    credential_from: str = ""  # where the credentials were found, for messages

    def __post_init__(self) -> None:
        self.name = self.cfg.name

    @property
    def kind(self) -> str:
        return PRESETS[self.cfg.name].kind

    def _make_client(self) -> Any:
        missing = missing_extra(self.kind)
        if missing:
            raise ProviderError(missing)
        return self._bedrock() if self.kind == "bedrock" else self._vertex()

    def _bedrock(self) -> Any:
        import anthropic

        region = aws_region(self.cfg.region)
        if not region:
            raise ProviderError(
                "No AWS region for bedrock: set provider.region (e.g. 'us-east-1') or $AWS_REGION."
            )
        creds, self.credential_from = aws_credentials()
        http_client, self._abort = _abortable_http_client()
        return anthropic.AnthropicBedrock(
            aws_region=region,
            base_url=self.cfg.base_url or None,
            http_client=http_client,
            max_retries=0,
            timeout=self.cfg.timeout_ms / 1000,
            **creds,
        )

    def _vertex(self) -> Any:
        import anthropic
        import google.auth
        from google.auth.exceptions import DefaultCredentialsError

        region = self.cfg.region or os.environ.get("CLOUD_ML_REGION")
        if not region:
            raise ProviderError(
                "No region for vertex: set provider.region (e.g. 'us-east5' or 'global') or "
                "$CLOUD_ML_REGION."
            )
        try:
            credentials, found_project = google.auth.default(
                scopes=["https://www.googleapis.com/auth/cloud-platform"]
            )
        except DefaultCredentialsError:
            raise ProviderError(
                "No Google credentials for vertex: run gcloud auth application-default "
                "login, or set $GOOGLE_APPLICATION_CREDENTIALS to a key file."
            ) from None
        for part in ("refresh_token", "client_secret"):
            value = getattr(credentials, part, None)
            secrets.register(value if isinstance(value, str) else None)
        project = self.cfg.project or os.environ.get("ANTHROPIC_VERTEX_PROJECT_ID") or found_project
        if not project:
            raise ProviderError(
                "No Google Cloud project for vertex: set provider.project or "
                "$ANTHROPIC_VERTEX_PROJECT_ID."
            )
        self.credential_from = vertex_credential_source()
        http_client, self._abort = _abortable_http_client()
        return _redacting_vertex(anthropic.AnthropicVertex)(
            region=region,
            project_id=project,
            credentials=credentials,
            base_url=self.cfg.base_url or None,
            http_client=http_client,
            max_retries=0,
            timeout=self.cfg.timeout_ms / 1000,
        )

    def _classify(self, err: BaseException) -> ProviderError:
        import anthropic

        if self.kind == "bedrock":
            region = aws_region(self.cfg.region) or "this region"
        else:
            region = self.cfg.region or os.environ.get("CLOUD_ML_REGION") or "this region"
        if isinstance(err, anthropic.APIStatusError):
            body = err.body
            detail = ""
            if isinstance(body, dict):
                inner = body.get("error", body)
                detail = str((inner.get("message") if isinstance(inner, dict) else inner) or "")
            said = (bedrock_fault if self.kind == "bedrock" else vertex_fault)(
                err.status_code, detail, region
            )
            if said is not None:
                return _reworded(classify(err, self.cfg.timeout_ms / 1000), said)
        if type(err).__name__ == "RefreshError":  # google.auth: no token for these credentials
            return ProviderError(
                secrets.redact(
                    f"Google gave no access token for vertex ({err.args[0] if err.args else err}):"
                    " run gcloud auth application-default login, or check the key file in "
                    "$GOOGLE_APPLICATION_CREDENTIALS."
                ),
                retryable=False,
            )
        if isinstance(err, RuntimeError | ValueError) and "credentials" in str(err).lower():
            return ProviderError(
                secrets.redact(f"The {self.kind} credentials could not be used: {err}")
            )
        fault = classify(err, self.cfg.timeout_ms / 1000, address_origin(self.cfg.base_url))
        if "host name could not be resolved" in fault.message and not self.cfg.base_url:
            # The region's endpoint does not exist: the service is not offered there.
            service = "Bedrock" if self.kind == "bedrock" else "Vertex AI"
            return _reworded(
                fault,
                f"{fault.message} {service} may not be offered in {region}: set "
                "provider.region to a region that has it.",
            )
        return fault

    def models(self) -> list[str]:
        """The Claude models the cloud lists (raise ProviderError in plain words: the core
        then offers the configured model, with the reason)."""
        missing = missing_extra(self.kind)
        if missing:
            raise ProviderError(missing)
        return self._bedrock_models() if self.kind == "bedrock" else self._vertex_models()

    def _bedrock_models(self) -> list[str]:
        """Bedrock's control plane (the `bedrock` client of boto3, signed as the runtime
        is): the Anthropic foundation models called by their own id (ON_DEMAND, ACTIVE),
        and the inference profiles of Anthropic models (`us.anthropic.…`, the ids the newer
        models are called by)."""
        import boto3
        import botocore.config
        import botocore.exceptions

        region = aws_region(self.cfg.region)
        if not region:
            raise ProviderError(
                "No AWS region for bedrock: set provider.region (e.g. 'us-east-1') or $AWS_REGION."
            )
        creds, where = aws_credentials()
        if "api_key" in creds:
            raise ProviderError(
                "Bedrock's model list takes AWS credentials; a Bedrock API key "
                f"({where}) only calls models: set provider.model to the one you use."
            )
        config = botocore.config.Config(
            retries={"max_attempts": 1},
            connect_timeout=5,
            read_timeout=self.cfg.timeout_ms / 1000,
        )
        try:
            session = boto3.Session(
                aws_access_key_id=creds.get("aws_access_key"),
                aws_secret_access_key=creds.get("aws_secret_key"),
                aws_session_token=creds.get("aws_session_token"),
                profile_name=creds.get("aws_profile"),
                region_name=region,
            )
            client = session.client(
                "bedrock", endpoint_url=self.cfg.base_url or None, config=config
            )
            listed = client.list_foundation_models(byProvider="Anthropic")
            out = [
                str(m["modelId"])
                for m in listed.get("modelSummaries") or []
                if "ON_DEMAND" in (m.get("inferenceTypesSupported") or [])
                and (m.get("modelLifecycle") or {}).get("status", "ACTIVE") == "ACTIVE"
            ]
            for page in client.get_paginator("list_inference_profiles").paginate():
                out += [
                    str(p["inferenceProfileId"])
                    for p in page.get("inferenceProfileSummaries") or []
                    if ".anthropic." in str(p.get("inferenceProfileId"))
                    and p.get("status", "ACTIVE") == "ACTIVE"
                ]
        except botocore.exceptions.ClientError as err:
            error = err.response.get("Error") or {}
            code, detail = str(error.get("Code") or ""), str(error.get("Message") or "")
            if code in ("AccessDeniedException", "UnrecognizedClientException") or (
                "not authorized" in detail
            ):
                raise ProviderError(
                    secrets.redact(
                        f"AWS did not let {where} list Bedrock's models in {region} ({code}): "
                        "the IAM policy needs bedrock:ListFoundationModels and "
                        "bedrock:ListInferenceProfiles."
                    )
                ) from None
            raise ProviderError(
                secrets.redact(f"Bedrock did not list its models ({code}: {detail}).")
            ) from None
        except botocore.exceptions.NoCredentialsError:
            raise ProviderError(
                "No AWS credentials to list Bedrock's models: set $AWS_PROFILE or "
                "$AWS_ACCESS_KEY_ID / $AWS_SECRET_ACCESS_KEY (or run aws sso login)."
            ) from None
        except botocore.exceptions.BotoCoreError as err:
            raise ProviderError(
                secrets.redact(f"Could not reach Bedrock to list its models: {err}")
            ) from None
        return sorted(set(out))

    def _vertex_models(self) -> list[str]:
        """The Model Garden's Anthropic models (Vertex AI v1beta1 publishers.models.list,
        the one documented listing of publisher models; v1 has only get), each as the
        `model@version` id rawPredict takes. It is the catalogue, not what this project has
        enabled: a model not enabled says so when it is used (404)."""
        client = self._get_client()
        root = str(client.base_url).rstrip("/").removesuffix("/v1")
        url = f"{root}/v1beta1/publishers/anthropic/models"
        out: list[str] = []
        token = ""
        for _ in range(20):  # pages
            params: dict[str, Any] = {"pageSize": 100}
            if token:
                params["pageToken"] = token
            try:
                raw = client.get(url, cast_to=object, options={"params": params})
            except Exception as err:
                raise self._classify(err) from None
            page = raw if isinstance(raw, dict) else {}
            for m in page.get("publisherModels") or []:
                name = str(m.get("name") or "").rsplit("/", 1)[-1]
                version = m.get("versionId")
                if name:
                    out.append(f"{name}@{version}" if version else name)
            token = str(page.get("nextPageToken") or "")
            if not token:
                break
        return sorted(set(out))


def _reworded(fault: ProviderError, text: str) -> ProviderError:
    return ProviderError(
        secrets.redact(text), retryable=fault.retryable, retry_after=fault.retry_after
    )


def vertex_credential_source() -> str:
    """Where Google's default credentials come from (a path or a mechanism, never a value)."""
    path = os.environ.get("GOOGLE_APPLICATION_CREDENTIALS")
    if path:
        return f"$GOOGLE_APPLICATION_CREDENTIALS ({path})"
    config = os.environ.get("CLOUDSDK_CONFIG") or os.path.expanduser("~/.config/gcloud")
    adc = os.path.join(config, "application_default_credentials.json")
    if os.path.exists(adc):
        return f"gcloud application-default credentials ({adc})"
    return "the Google Cloud metadata server"


def _redacting_vertex(base: Callable[..., Any]) -> Callable[..., Any]:
    """AnthropicVertex whose access tokens (minted and refreshed by google-auth inside the
    SDK) are registered with the redactor as each request takes one."""

    class RedactingVertex(base):  # type: ignore[misc,valid-type]
        def _prepare_request(self, request: Any) -> None:
            super()._prepare_request(request)
            bearer = request.headers.get("Authorization", "")
            secrets.register(bearer.removeprefix("Bearer ") or None)

    return RedactingVertex
